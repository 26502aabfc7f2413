//! `compare`'s run-length advice: from the session's runs, what a run's own error weighs
//! against the spread between runs, and the change to the run command that answers soonest:
//! a shorter measurement, or first a shorter warm-up, in lengths the harness takes
//! (docs/statistics.md §1b).

use benchgate_api::agent::{MEASURE_SECS, measure_text};
use benchgate_stats::run_length::{RunCost, RunSplit};

use crate::command::BenchCommand;
use crate::evaluate::Evaluation;
use crate::formats::Format;
use crate::rounds::Round;
use crate::run_lengths::{
    Length, LengthSteps, RunLengths, WARM_UP_SHARE, advised_warm_up, find_cargo_lock,
};

/// "run length, from NAME's runs: a run's own error is 2% of its variance …", for the gated
/// row whose runs' own errors weigh most (the one shorter runs would slow most), with the
/// length (and warm-up) that would answer soonest when the session's pace says what a run
/// costs; `None` when the format states no bounds of known confidence or too few rounds ran.
pub(super) fn run_length_advice(
    format: Format,
    rounds: &[Round],
    eval: &Evaluation,
    seconds_per_round: Option<f64>,
    measure_secs: Option<f64>,
    command: &BenchCommand,
) -> Option<String> {
    let confidence = crate::formats::bounds_confidence(format)?;
    let sides: Vec<(&[benchgate_api::Measurement], &[benchgate_api::Measurement])> = rounds
        .iter()
        .map(|r| (r.base.as_slice(), r.head.as_slice()))
        .collect();
    let splits = crate::samples::run_splits(&sides, confidence);
    let (key, split) = splits
        .iter()
        .filter(|(key, _)| {
            eval.results
                .iter()
                .any(|r| r.gated && r.name == key.benchmark && r.metric == key.metric)
        })
        .max_by(|a, b| a.1.within_share().total_cmp(&b.1.within_share()))?;
    let mut advice = format!(
        "run length, from {}'s {} rounds: {}",
        key.benchmark,
        split.pairs,
        benchgate_stats::words::run_length(split)
    );
    let lengths = RunLengths::of_command(command, format);
    let dir = command.cwd.clone().or_else(|| std::env::current_dir().ok());
    let setting = seconds_per_round.and_then(|per_round| {
        RunSetting::new(
            measure_secs,
            per_round / 2.0,
            eval.benchmark_count(),
            lengths,
            LengthSteps::of(format, dir.as_deref().and_then(find_cargo_lock).as_deref()),
        )
    });
    if let Some(words) = setting.and_then(|s| s.advice(split)) {
        advice.push_str("; ");
        advice.push_str(&words);
    }
    Some(advice)
}

/// Where the length a run measures is set.
#[derive(Debug, Clone, Copy, PartialEq)]
enum MeasureSource {
    /// `{measure_secs}`: the suite's `measure`, or `--measure-secs`.
    Placeholder,
    /// A number in the run command.
    Written,
    /// The harness's default.
    Default,
}

/// What a session's runs cost and what its run command lets change.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RunSetting {
    measure_secs: f64,
    source: MeasureSource,
    /// Seconds one run took (half a round).
    run_secs: f64,
    benchmarks: usize,
    lengths: Option<RunLengths>,
    steps: LengthSteps,
}

/// A way to run: the warm-up written (`None`: as now), the length measured, and the minutes
/// to an answer relative to now.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Plan {
    warm_up: Option<f64>,
    measure: f64,
    minutes: f64,
}

impl RunSetting {
    /// `None` when the run command sets no length the session knows.
    fn new(
        measure_secs: Option<f64>,
        run_secs: f64,
        benchmarks: usize,
        lengths: Option<RunLengths>,
        steps: LengthSteps,
    ) -> Option<Self> {
        let (measure_secs, source) = match (measure_secs, lengths.as_ref().and_then(|l| l.measure))
        {
            (Some(t), _) => (t, MeasureSource::Placeholder),
            (None, Some(Length::Written(t))) => (t, MeasureSource::Written),
            (None, Some(Length::Default(t))) => (t, MeasureSource::Default),
            _ => return None,
        };
        Some(RunSetting {
            measure_secs,
            source,
            run_secs,
            benchmarks,
            lengths,
            steps,
        })
    }

    /// The warm-up each benchmark spends now, when the command says and the runs' time holds
    /// it (benchmarks may set their own in code), with what the runs cost.
    fn cost_now(&self) -> (Option<Length>, Option<RunCost>) {
        let t0 = self.measure_secs;
        let warm_up = self.lengths.as_ref().and_then(|l| l.warm_up);
        let stated = warm_up.and_then(|w| {
            let (fixed, per) = match w {
                Length::AsMeasured => (0.0, 2.0),
                Length::Written(s) | Length::Default(s) => (s, 1.0),
            };
            RunCost::from_run_secs(self.run_secs, t0, self.benchmarks, fixed, per)
        });
        match stated {
            Some(cost) => (warm_up, Some(cost)),
            None => (
                None,
                RunCost::from_run_secs(self.run_secs, t0, self.benchmarks, 0.0, 1.0),
            ),
        }
    }

    /// The best length at the warm-up as now, in lengths `steps` takes.
    fn measure_plan(&self, split: &RunSplit, now: &RunCost, steps: &LengthSteps) -> Option<Plan> {
        let best = split.best_measure_secs_for(self.measure_secs, now)?;
        let t = steps.nearest(best.clamp(*MEASURE_SECS.start(), *MEASURE_SECS.end()));
        Some(Plan {
            warm_up: None,
            measure: t,
            minutes: split.minutes_factor(self.measure_secs, now, t, now),
        })
    }

    /// A shorter warm-up, the one advised for the length that then answers soonest, and that
    /// length; `None` when `steps` takes no warm-up shorter than now's `warm_up`.
    fn warm_up_plan(
        &self,
        split: &RunSplit,
        now: &RunCost,
        warm_up: f64,
        steps: &LengthSteps,
    ) -> Option<Plan> {
        // The length that answers soonest with a warm-up in proportion, to size the warm-up.
        let proportional = RunCost {
            warm_up_secs: 0.0,
            per_measured_sec: 1.0 + WARM_UP_SHARE,
            ..*now
        };
        let sized = split
            .best_measure_secs_for(self.measure_secs, &proportional)
            .unwrap_or(self.measure_secs);
        let shorter = advised_warm_up(sized, steps);
        if shorter >= warm_up {
            return None;
        }
        let then = now.with_warm_up(shorter);
        let t = split
            .best_measure_secs_for(self.measure_secs, &then)
            .map_or(self.measure_secs, |best| {
                steps.nearest(best.clamp(*MEASURE_SECS.start(), *MEASURE_SECS.end()))
            });
        Some(Plan {
            warm_up: Some(shorter),
            measure: t,
            minutes: split.minutes_factor(self.measure_secs, now, t, &then),
        })
    }

    /// The plan that answers soonest in lengths `steps` takes (the runs as now when no change
    /// answers sooner), and the measuring-only plan; `None` when the runs' cost is not known.
    fn plans(&self, split: &RunSplit, steps: &LengthSteps) -> Option<(Plan, Option<Plan>)> {
        let (warm_up, now) = self.cost_now();
        let now = now?;
        let measure = self.measure_plan(split, &now, steps);
        let warm = warm_up
            .map(|w| w.secs(self.measure_secs))
            .filter(|w| *w > 0.0)
            .and_then(|w| self.warm_up_plan(split, &now, w, steps));
        let as_now = Plan {
            warm_up: None,
            measure: self.measure_secs,
            minutes: 1.0,
        };
        // A length the harness takes may answer later than now (1 s where 0.02 s ran): never
        // advised.
        let best = [measure, warm]
            .into_iter()
            .flatten()
            .filter(|p| p.minutes < 1.0)
            .min_by(|a, b| a.minutes.total_cmp(&b.minutes))
            .unwrap_or(as_now);
        Some((best, measure))
    }

    /// What to change, in words: "each run spends 3 s warming up …: a shorter warm-up
    /// (`--warm-up-time 0.2`) saves more than a shorter measurement …", or "the run length
    /// that answers soonest here is ~0.3 s per benchmark …", and what the harness cannot take.
    fn advice(&self, split: &RunSplit) -> Option<String> {
        let (best, measure_only) = self.plans(split, &self.steps)?;
        let (warm_up, now) = self.cost_now();
        let now = now?;
        let t0 = self.measure_secs;
        let k = self.benchmarks as f64;
        let mut parts = Vec::new();
        let warm_now = warm_up.map(|w| w.secs(t0)).filter(|w| *w > 0.0);
        if let Some(w) = warm_now
            && (best.warm_up.is_some() || w >= t0)
        {
            parts.push(format!(
                "each run spends {} s warming up {} against {} s measuring{}",
                measure_text(k * w),
                benchgate_stats::words::count(self.benchmarks, "benchmark"),
                measure_text(k * t0),
                self.warm_up_origin(warm_up)
            ));
        }
        let how = self.measure_how();
        match best.warm_up {
            Some(shorter) => {
                let lengths = self.lengths.as_ref()?;
                let then = now.with_warm_up(shorter);
                let warm_only = then.secs(t0) / now.secs(t0);
                let saves = if measure_only.is_none_or(|m| warm_only <= m.minutes) {
                    "saves more than a shorter measurement"
                } else {
                    "saves time too"
                };
                let lead = format!(
                    "a shorter warm-up (`{}`) {saves}",
                    lengths.warm_up_flag_text(shorter)
                );
                parts.push(if best.measure == t0 {
                    format!(
                        "{lead}: ~{:.1}× the minutes to an answer at {} s per benchmark as now",
                        best.minutes,
                        measure_text(t0)
                    )
                } else {
                    format!(
                        "{lead}: with it, the run length that answers soonest here is ~{} s per \
                         benchmark (now {} s: {how}), ~{:.1}× the minutes to an answer",
                        measure_text(best.measure),
                        measure_text(t0),
                        best.minutes
                    )
                });
            }
            None if best.measure != t0 => parts.push(format!(
                "the run length that answers soonest here is ~{} s per benchmark (now {} s: \
                 {how}), ~{:.1}× the minutes to an answer",
                measure_text(best.measure),
                measure_text(t0),
                best.minutes
            )),
            None => {}
        }
        if let LengthSteps::WholeSeconds { source } = &self.steps
            && let Some((free, _)) = self.plans(split, &LengthSteps::Fractions)
            && free.minutes < 0.95 * best.minutes
        {
            let warm = match (free.warm_up, &self.lengths) {
                (Some(w), Some(l)) => format!("`{}` and ", l.warm_up_flag_text(w)),
                _ => String::new(),
            };
            parts.push(format!(
                "{source} takes whole seconds for `--measurement-time` and `--warm-up-time`, \
                 none shorter than 1 s: criterion 0.4 or later takes fractions ({warm}~{} s per \
                 benchmark: ~{:.1}× the minutes to an answer), and {}",
                measure_text(free.measure),
                free.minutes,
                crate::run_lengths::criterion_code_lengths(free.warm_up, Some(free.measure))
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// " (`--warm-up-time 1`)" or " (criterion's default 3 s)": where the warm-up comes from.
    fn warm_up_origin(&self, warm_up: Option<Length>) -> String {
        let Some(lengths) = &self.lengths else {
            return String::new();
        };
        match warm_up {
            Some(Length::Written(s)) => format!(" (`{}`)", lengths.warm_up_flag_text(s)),
            Some(Length::AsMeasured) => format!(
                " (`{}`)",
                lengths.warm_up_flag_with(benchgate_api::agent::MEASURE_PLACEHOLDER)
            ),
            Some(Length::Default(s)) => format!(
                " ({}'s default {} s: no `{}` in the run command)",
                lengths.flags.format,
                measure_text(s),
                lengths.flags.warm_up_flag
            ),
            None => String::new(),
        }
    }

    /// How the user sets the measuring length.
    fn measure_how(&self) -> String {
        let flag = self
            .lengths
            .as_ref()
            .map_or("the harness's length flag", |l| l.flags.measure_flag);
        match self.source {
            MeasureSource::Placeholder => "`measure` in the suite, or --measure-secs".to_owned(),
            MeasureSource::Written => format!("`{flag}` in the run command"),
            MeasureSource::Default => format!(
                "the harness's default; `{flag} {{measure_secs}}` in the run command with \
                 `measure` sets it"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's variance 0.0101, its own error 0.0001 of it at 1 s per benchmark: between-run
    /// spread 0.01, so shorter runs cost few rounds.
    fn split() -> RunSplit {
        RunSplit {
            per_run: 0.0101,
            within: 0.0001,
            pairs: 12,
        }
    }

    fn setting(line: &str, run_secs: f64, steps: LengthSteps) -> RunSetting {
        RunSetting::new(
            Some(1.0),
            run_secs,
            3,
            RunLengths::of_line(line, Format::Criterion),
            steps,
        )
        .unwrap()
    }

    const ISSUE_58: &str = "cargo bench -- --warm-up-time 1 --measurement-time {measure_secs}";

    /// Issue 58's suite: 3 benchmarks, 1 s warm-ups, 1 s measured, runs of 7 s (1 s fixed).
    /// Now: 1 + 3·(1 + 1) = 7 s. A 0.1 s warm-up (a fifth of ~0.11 s is below the floor)
    /// leaves 1 + 0.3 = 1.3 s that stays; the best length is then
    /// sqrt(0.0001·1.3 / (0.01·3)) = 0.0658 s: a run of 1.5 s for
    /// (0.990099 + 0.009901/0.0658) = 1.1406× the rounds: 1.1406·1.4974/7 = 0.244× the minutes.
    /// A shorter measurement alone: sqrt(0.0001·4/0.03) = 0.1155 s, a run of 4.35 s for 1.076×
    /// the rounds: 0.668×. The warm-up alone at 1 s measured: 4.3/7 = 0.61×, more saved.
    #[test]
    fn a_warm_up_that_dominates_is_advised_shorter_before_the_measurement() {
        let s = setting(ISSUE_58, 7.0, LengthSteps::Fractions);
        let (best, measure) = s.plans(&split(), &LengthSteps::Fractions).unwrap();
        let measure = measure.unwrap();
        assert_eq!(best.warm_up, Some(0.1));
        assert_eq!(best.measure, 0.066);
        assert!((best.minutes - 0.2443).abs() < 2e-3, "{best:?}");
        assert_eq!(measure.measure, 0.115);
        assert!((measure.minutes - 0.668).abs() < 2e-3, "{measure:?}");
        assert_eq!(
            s.advice(&split()).unwrap(),
            "each run spends 3 s warming up 3 benchmarks against 3 s measuring \
             (`--warm-up-time 1`); a shorter warm-up (`--warm-up-time 0.1`) saves more than a \
             shorter measurement: with it, the run length that answers soonest here is ~0.066 s \
             per benchmark (now 1 s: `measure` in the suite, or --measure-secs), ~0.2× the \
             minutes to an answer"
        );
    }

    /// The same suite on criterion 0.3.6: nothing below 1 s, so nothing to change here; the
    /// advice says what criterion 0.4 would allow.
    #[test]
    fn criterion_0_3_cannot_take_the_advised_length_and_the_advice_says_so() {
        let steps = LengthSteps::WholeSeconds {
            source: "criterion 0.3.6 (Cargo.lock)".into(),
        };
        let s = setting(ISSUE_58, 7.0, steps.clone());
        let (best, measure) = s.plans(&split(), &steps).unwrap();
        assert_eq!(measure.unwrap().measure, 1.0, "whole seconds, 1 s at least");
        assert_eq!((best.warm_up, best.measure), (None, 1.0));
        assert!((best.minutes - 1.0).abs() < 1e-9, "{best:?}");
        assert_eq!(
            s.advice(&split()).unwrap(),
            "each run spends 3 s warming up 3 benchmarks against 3 s measuring \
             (`--warm-up-time 1`); criterion 0.3.6 (Cargo.lock) takes whole seconds for \
             `--measurement-time` and `--warm-up-time`, none shorter than 1 s: criterion 0.4 or \
             later takes fractions (`--warm-up-time 0.1` and ~0.066 s per benchmark: ~0.2× the \
             minutes to an answer), and any version takes it set in the bench's code \
             (`Criterion::default().warm_up_time(Duration::from_millis(100))\
             .measurement_time(Duration::from_millis(66))`) with the flags left out of the run \
             command"
        );
    }

    /// 0.02 s measured where whole seconds are all the harness takes: 1 s would answer later,
    /// so no length is advised; what fractions would allow still is.
    #[test]
    fn a_length_that_answers_later_than_now_is_never_advised() {
        let steps = LengthSteps::WholeSeconds {
            source: "criterion 0.3.6 (Cargo.lock)".into(),
        };
        let s = RunSetting::new(
            Some(0.02),
            0.3,
            1,
            RunLengths::of_line(
                "sh bench.sh --warm-up-time 0.2 --measurement-time {measure_secs}",
                Format::Criterion,
            ),
            steps.clone(),
        )
        .unwrap();
        let (best, measure) = s.plans(&split(), &steps).unwrap();
        assert!(measure.unwrap().minutes > 1.0);
        assert_eq!(
            (best.warm_up, best.measure, best.minutes),
            (None, 0.02, 1.0)
        );
        let advice = s.advice(&split()).unwrap();
        assert!(
            advice.starts_with(
                "each run spends 0.2 s warming up 1 benchmark against 0.02 s measuring \
                 (`--warm-up-time 0.2`); criterion 0.3.6 (Cargo.lock) takes whole seconds"
            ) && !advice.contains("answers soonest"),
            "{advice}"
        );
    }

    /// Criterion's default 3 s warm-up when the command writes none; and a warm-up the runs'
    /// time cannot hold (benchmarks that set their own) is not counted.
    #[test]
    fn an_absent_warm_up_is_the_harness_default_when_the_runs_time_holds_it() {
        let line = "cargo bench -- --measurement-time {measure_secs}";
        let s = setting(line, 13.0, LengthSteps::Fractions);
        let (warm_up, now) = s.cost_now();
        assert_eq!(warm_up, Some(Length::Default(3.0)));
        assert_eq!(now.unwrap().fixed_secs, 1.0);
        let advice = s.advice(&split()).unwrap();
        assert!(
            advice.starts_with(
                "each run spends 9 s warming up 3 benchmarks against 3 s measuring \
                 (criterion's default 3 s: no `--warm-up-time` in the run command); a shorter \
                 warm-up (`--warm-up-time 0.1`) saves more"
            ),
            "{advice}"
        );
        let short = setting(line, 4.0, LengthSteps::Fractions);
        let (warm_up, now) = short.cost_now();
        assert_eq!(warm_up, None);
        assert_eq!(now.unwrap().fixed_secs, 1.0);
        let advice = short.advice(&split()).unwrap();
        assert!(
            advice.starts_with("the run length that answers soonest here is ~0.058 s"),
            "{advice}"
        );
    }

    /// `--warm-up-time {measure_secs}`: every measured second costs two, so the best length is
    /// shorter: sqrt(0.0001·1 / (0.01·3·2)) = 0.0408 s at 1 s fixed, its warm-up as short:
    /// 0.219× the minutes, sooner than a written 0.1 s warm-up (0.244×).
    #[test]
    fn a_warm_up_as_long_as_the_measuring_doubles_what_a_measured_second_costs() {
        let line = "cargo bench -- --measurement-time {measure_secs} --warm-up-time {measure_secs}";
        let s = setting(line, 7.0, LengthSteps::Fractions);
        let (_, now) = s.cost_now();
        let now = now.unwrap();
        assert_eq!((now.fixed_secs, now.per_measured_sec), (1.0, 2.0));
        let m = s
            .measure_plan(&split(), &now, &LengthSteps::Fractions)
            .unwrap();
        assert_eq!(m.measure, 0.041);
        assert_eq!(
            s.advice(&split()).unwrap(),
            "each run spends 3 s warming up 3 benchmarks against 3 s measuring \
             (`--warm-up-time {measure_secs}`); the run length that answers soonest here is \
             ~0.041 s per benchmark (now 1 s: `measure` in the suite, or --measure-secs), ~0.2× \
             the minutes to an answer"
        );
    }
}
