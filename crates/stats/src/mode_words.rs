//! How per-process modes read: which side ran processes in a slow mode, how often and how much
//! slower, and which way its frequency moved (docs/statistics.md §4c). Part of the one
//! vocabulary of `words`.

use benchgate_api::{BenchmarkResult, ModeShift, ModeSummary};

/// "1 process in 6" when `k` of `n` is that share exactly, else "13 of 80 processes": the one
/// way a slow mode's share reads (the comment, `compare`, the runner page).
pub fn process_share(k: usize, n: usize) -> String {
    if k > 0 && n.is_multiple_of(k) {
        format!("1 process in {}", n / k)
    } else {
        format!("{k} of {n} processes")
    }
}

/// [`process_share`] with its verb: "1 process in 6 runs", "13 of 80 processes run".
fn processes(k: usize, n: usize) -> String {
    let share = process_share(k, n);
    if share.starts_with("1 process in") {
        format!("{share} runs")
    } else {
        format!("{share} run")
    }
}

/// How the slow mode's frequency moved, for a verdict the frequency test decided: "the slow
/// mode is 3× as frequent on head (9 vs 3 of 40 runs)".
pub fn mode_shift(m: &ModeSummary, shift: ModeShift) -> String {
    let (more, fewer) = match shift {
        ModeShift::MoreOnHead => (m.head_slow, m.base_slow),
        ModeShift::LessOnHead => (m.base_slow, m.head_slow),
    };
    let (side, other) = match shift {
        ModeShift::MoreOnHead => ("head", "base"),
        ModeShift::LessOnHead => ("base", "head"),
    };
    if fewer == 0 {
        return format!(
            "the slow mode comes on {side} only ({more} of {} runs)",
            m.runs
        );
    }
    let ratio = more as f64 / fewer as f64;
    let how = match shift {
        ModeShift::MoreOnHead => format!("{ratio:.1}× as frequent on head"),
        ModeShift::LessOnHead => format!("{ratio:.1}× rarer on head"),
    };
    format!(
        "the slow mode is {how} ({more} vs {fewer} of {} runs on {side} and {other})",
        m.runs
    )
}

/// The slow mode of a row's runs in a sentence, for its hints: which side ran processes in a
/// slow mode, how often and how much slower; `None` when no run was slow.
pub fn modes(r: &BenchmarkResult) -> Option<String> {
    let m = r.modes.as_ref()?;
    let slower = m
        .slow_pct
        // Whole per cents: a slow mode is tens of per cent, and `words` would import this file.
        .map(|p| format!(" (+{p:.0}%)"))
        .unwrap_or_default();
    let runs = m.runs;
    Some(match (m.base_slow, m.head_slow) {
        (0, 0) => return None,
        _ if m.typical_run => format!(
            "{} in a slow mode{slower} on both sides (base {}, head {} of {runs}): the machine \
             or the benchmark is bistable; the change shown is the typical run's, the mode's \
             frequency is tested apart",
            processes(m.base_slow + m.head_slow, 2 * runs),
            m.base_slow,
            m.head_slow
        ),
        (0, h) => format!(
            "head ran {h} of {runs} processes in a slow mode{slower}, base none: the change may \
             add rare slow runs; the interval's worse bound counts them"
        ),
        (b, 0) => format!("base ran {b} of {runs} processes in a slow mode{slower}, head none"),
        (b, h) => format!("a slow mode{slower} in base {b} and head {h} of {runs} processes"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_api::{Direction, VerdictKind};

    fn row(base_slow: usize, head_slow: usize, typical_run: bool) -> BenchmarkResult {
        let mut r = BenchmarkResult::unanalysed(
            "req",
            "time",
            "ns",
            Direction::LowerIsBetter,
            VerdictKind::Slower,
            String::new(),
        );
        r.modes = Some(ModeSummary {
            runs: 40,
            base_slow,
            head_slow,
            slow_pct: Some(30.2),
            typical_run,
            shift: None,
        });
        r
    }

    /// The exact sentences the comment and `compare` print for each case.
    #[test]
    fn each_case_reads_as_the_docs_quote_it() {
        assert_eq!(
            modes(&row(7, 6, true)).unwrap(),
            "13 of 80 processes run in a slow mode (+30%) on both sides (base 7, head 6 of 40): \
             the machine or the benchmark is bistable; the change shown is the typical run's, \
             the mode's frequency is tested apart"
        );
        assert!(
            modes(&row(8, 8, true))
                .unwrap()
                .starts_with("1 process in 5 runs in a slow mode")
        );
        assert_eq!(
            modes(&row(0, 4, false)).unwrap(),
            "head ran 4 of 40 processes in a slow mode (+30%), base none: the change may add \
             rare slow runs; the interval's worse bound counts them"
        );
        assert_eq!(
            modes(&row(4, 0, false)).unwrap(),
            "base ran 4 of 40 processes in a slow mode (+30%), head none"
        );
        assert_eq!(modes(&row(0, 0, false)), None);
        let m = row(3, 9, true).modes.unwrap();
        assert_eq!(
            mode_shift(&m, ModeShift::MoreOnHead),
            "the slow mode is 3.0× as frequent on head (9 vs 3 of 40 runs on head and base)"
        );
        let m = row(0, 5, false).modes.unwrap();
        assert_eq!(
            mode_shift(&m, ModeShift::MoreOnHead),
            "the slow mode comes on head only (5 of 40 runs)"
        );
        assert_eq!(process_share(6, 36), "1 process in 6");
    }
}
