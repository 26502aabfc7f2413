//! `benchgate config check`'s warnings about how a suite's runs spend their time, from its run
//! command's harness flags: a warm-up as long as the measuring or longer (which no round's
//! answer uses), and lengths the harness cannot take (criterion before 0.4: whole seconds).

use std::path::Path;

use benchgate_api::agent::{AUTO_MEASURE_SECS, BenchmarkSpec, measure_text};

use crate::formats::Format;
use crate::run_lengths::{Length, LengthSteps, RunLengths, advised_warm_up, find_cargo_lock};

/// The warnings for every `(name, spec)` suite of a config file in `dir`, each naming its
/// suite; the project's Cargo.lock (in `dir` or above it) says which criterion runs.
pub fn warnings(
    suites: impl IntoIterator<Item = (String, BenchmarkSpec)>,
    dir: &Path,
) -> Vec<String> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let lock = find_cargo_lock(&dir);
    suites
        .into_iter()
        .flat_map(|(name, spec)| {
            suite_warnings(&spec, lock.as_deref())
                .into_iter()
                .map(move |w| format!("suite {name}: {w}"))
        })
        .collect()
}

/// A suite's warnings, given the project's Cargo.lock text.
pub fn suite_warnings(spec: &BenchmarkSpec, cargo_lock: Option<&str>) -> Vec<String> {
    let Ok(format) = spec.format.parse::<Format>() else {
        return Vec::new();
    };
    let Some(lengths) = RunLengths::of_line(&spec.run, format) else {
        return Vec::new();
    };
    let steps = LengthSteps::of(format, cargo_lock);
    let mut out = Vec::new();
    if let LengthSteps::WholeSeconds { source } = &steps {
        out.extend(refused_lengths(spec, &lengths, &steps, source));
    }
    out.extend(dominant_warm_up(spec, &lengths, &steps));
    out
}

/// "each benchmark warms up 1 s … for 1 s measured …", when the warm-up is at least the
/// measuring, with the warm-up to write instead.
fn dominant_warm_up(
    spec: &BenchmarkSpec,
    lengths: &RunLengths,
    steps: &LengthSteps,
) -> Option<String> {
    let (measure, measured_as) = match lengths.measure? {
        Length::AsMeasured if spec.measure_auto => (
            AUTO_MEASURE_SECS,
            format!(
                "measure = \"auto\", {} s in A/A sessions and often less in comparisons",
                measure_text(AUTO_MEASURE_SECS)
            ),
        ),
        Length::AsMeasured => {
            let t = spec.measure_secs?;
            (t, format!("measure = \"{}s\"", measure_text(t)))
        }
        Length::Written(t) => (
            t,
            format!("`{} {}`", lengths.flags.measure_flag, measure_text(t)),
        ),
        Length::Default(t) => (
            t,
            format!(
                "{}'s default, no `{}`",
                lengths.flags.format, lengths.flags.measure_flag
            ),
        ),
    };
    let warm_up = lengths.warm_up?;
    let secs = warm_up.secs(measure);
    if !(secs > 0.0 && secs >= measure) {
        return None;
    }
    let warmed_as = match warm_up {
        Length::Written(s) => format!("`{}`", lengths.warm_up_flag_text(s)),
        Length::AsMeasured => format!(
            "`{}`",
            lengths.warm_up_flag_with(benchgate_api::agent::MEASURE_PLACEHOLDER)
        ),
        Length::Default(_) => format!(
            "{}'s default, no `{}`",
            lengths.flags.format, lengths.flags.warm_up_flag
        ),
    };
    let mut text = format!(
        "each benchmark warms up {} s ({warmed_as}) for {} s measured ({measured_as}): {} of \
         every run is warm-up, which no round's answer uses and every round pays",
        measure_text(secs),
        measure_text(measure),
        if secs > measure { "most" } else { "half" }
    );
    let advised = advised_warm_up(measure, steps);
    if advised < secs {
        text.push_str(&format!(
            ". Write `{}` in the run command: each round then takes less time for as many rounds",
            lengths.warm_up_flag_text(advised)
        ));
    } else if let LengthSteps::WholeSeconds { source } = steps {
        let free = advised_warm_up(measure, &LengthSteps::Fractions);
        text.push_str(&format!(
            ". {source} takes whole seconds, none shorter than 1 s: criterion 0.4 or later takes \
             `{}`; {}",
            lengths.warm_up_flag_text(free),
            crate::run_lengths::criterion_code_lengths(Some(free), None)
        ));
    }
    Some(text)
}

/// Lengths criterion before 0.4 refuses: a fraction of a second exits with an error.
fn refused_lengths(
    spec: &BenchmarkSpec,
    lengths: &RunLengths,
    steps: &LengthSteps,
    source: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    let uses_measure = [lengths.warm_up, lengths.measure].contains(&Some(Length::AsMeasured));
    if uses_measure && spec.measure_auto {
        out.push(format!(
            "measure = \"auto\" chooses lengths such as 0.3 s, which {source} refuses (it takes \
             whole seconds): set `measure` to whole seconds, or use criterion 0.4 or later"
        ));
    } else if uses_measure && let Some(t) = spec.measure_secs.filter(|t| !steps.takes(*t)) {
        out.push(format!(
            "measure = \"{}s\" puts {} s in the run command, which {source} refuses (it takes \
             whole seconds and exits with an error): measure = \"{}s\", or criterion 0.4 or later",
            measure_text(t),
            measure_text(t),
            measure_text(steps.nearest(t))
        ));
    }
    for (length, flag) in [
        (lengths.warm_up, lengths.flags.warm_up_flag),
        (lengths.measure, lengths.flags.measure_flag),
    ] {
        if let Some(Length::Written(t)) = length
            && !steps.takes(t)
        {
            out.push(format!(
                "`{flag} {}` is not whole seconds, which {source} refuses (it exits with an \
                 error): `{flag} {}`, or criterion 0.4 or later",
                measure_text(t),
                measure_text(steps.nearest(t))
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A criterion suite running `run`, measuring `measure` (or `auto`).
    fn spec(run: &str, measure: Option<f64>, auto: bool) -> BenchmarkSpec {
        serde_json::from_value(serde_json::json!({
            "run": run,
            "format": "criterion",
            "measure_secs": measure.or(auto.then_some(AUTO_MEASURE_SECS)),
            "measure_auto": auto,
        }))
        .unwrap()
    }

    const LOCK_0_3: &str = "[[package]]\nname = \"criterion\"\nversion = \"0.3.6\"\n";
    const LOCK_0_5: &str = "[[package]]\nname = \"criterion\"\nversion = \"0.5.1\"\n";

    /// Issue 58's suite: a 1 s warm-up before each benchmark's 1 s.
    #[test]
    fn a_warm_up_as_long_as_the_measuring_is_warned_of_with_the_fix() {
        let s = spec(
            "cargo bench -- --warm-up-time 1 --measurement-time {measure_secs}",
            Some(1.0),
            false,
        );
        assert_eq!(
            suite_warnings(&s, Some(LOCK_0_5)),
            [
                "each benchmark warms up 1 s (`--warm-up-time 1`) for 1 s measured \
              (measure = \"1s\"): half of every run is warm-up, which no round's answer uses and \
              every round pays. Write `--warm-up-time 0.2` in the run command: each round then \
              takes less time for as many rounds"
            ]
        );
        assert_eq!(
            suite_warnings(&s, Some(LOCK_0_3)),
            [
                "each benchmark warms up 1 s (`--warm-up-time 1`) for 1 s measured \
              (measure = \"1s\"): half of every run is warm-up, which no round's answer uses and \
              every round pays. criterion 0.3.6 (Cargo.lock) takes whole seconds, none shorter \
              than 1 s: criterion 0.4 or later takes `--warm-up-time 0.2`; any version takes it \
              set in the bench's code (`Criterion::default().warm_up_time(Duration::from_millis(200))`) \
              with the flag left out of the run command"
            ]
        );
    }

    /// Criterion's defaults (3 s warm-up, 5 s measured) and a warm-up shorter than the
    /// measuring are not warned of; a default warm-up before 1 s measured is.
    #[test]
    fn only_a_warm_up_at_least_the_measuring_is_warned_of() {
        assert!(suite_warnings(&spec("cargo bench", None, false), None).is_empty());
        let short = spec(
            "cargo bench -- --warm-up-time 0.2 --measurement-time {measure_secs}",
            Some(1.0),
            false,
        );
        assert!(suite_warnings(&short, None).is_empty());
        let default = spec(
            "cargo bench -- --measurement-time {measure_secs}",
            Some(1.0),
            false,
        );
        assert_eq!(
            suite_warnings(&default, None),
            [
                "each benchmark warms up 3 s (criterion's default, no `--warm-up-time`) for 1 s \
              measured (measure = \"1s\"): most of every run is warm-up, which no round's answer \
              uses and every round pays. Write `--warm-up-time 0.2` in the run command: each \
              round then takes less time for as many rounds"
            ]
        );
    }

    /// `--warm-up-time {measure_secs}` halves every run; `auto` starts at 1 s.
    #[test]
    fn a_warm_up_as_long_as_measure_is_warned_of() {
        let s = spec(
            "cargo bench -- --measurement-time {measure_secs} --warm-up-time {measure_secs}",
            Some(2.0),
            false,
        );
        let w = suite_warnings(&s, None);
        assert!(
            w.len() == 1
                && w[0].starts_with(
                    "each benchmark warms up 2 s (`--warm-up-time {measure_secs}`) for 2 s \
                     measured (measure = \"2s\"): half"
                )
                && w[0].ends_with("Write `--warm-up-time 0.4` in the run command: each round then takes less time for as many rounds"),
            "{w:?}"
        );
    }

    /// Criterion 0.3 exits with an error on `--measurement-time 0.5`.
    #[test]
    fn lengths_criterion_0_3_refuses_are_warned_of() {
        let half = spec(
            "cargo bench -- --warm-up-time 0.5 --measurement-time {measure_secs}",
            Some(0.5),
            false,
        );
        let w = suite_warnings(&half, Some(LOCK_0_3));
        assert_eq!(
            w[..2],
            [
                "measure = \"0.5s\" puts 0.5 s in the run command, which criterion 0.3.6 \
                 (Cargo.lock) refuses (it takes whole seconds and exits with an error): \
                 measure = \"1s\", or criterion 0.4 or later",
                "`--warm-up-time 0.5` is not whole seconds, which criterion 0.3.6 (Cargo.lock) \
                 refuses (it exits with an error): `--warm-up-time 1`, or criterion 0.4 or later",
            ],
            "{w:?}"
        );
        let auto = spec(
            "cargo bench -- --warm-up-time 1 --measurement-time {measure_secs}",
            None,
            true,
        );
        let w = suite_warnings(&auto, Some(LOCK_0_3));
        assert!(
            w[0].starts_with("measure = \"auto\" chooses lengths such as 0.3 s"),
            "{w:?}"
        );
        let w = suite_warnings(&half, Some(LOCK_0_5));
        assert!(w.iter().all(|w| !w.contains("refuses")), "{w:?}");
    }
}
