//! Properties the issue names: symmetry under swapping sides, invariance to the unit, and a
//! running intersection that never widens.

use benchgate_stats::{
    AnalysisOptions, BenchmarkAnalysis, ConfidenceSequence, Interval, MixtureBoundary, Verdict,
    analyze_pairs,
};
use proptest::prelude::*;

/// Base samples around 100 and head samples within ±25% of their pair.
fn samples() -> impl Strategy<Value = (Vec<f64>, Vec<f64>)> {
    prop::collection::vec((50.0f64..150.0, 0.8f64..1.25), 2..60)
        .prop_map(|pairs| pairs.into_iter().map(|(b, r)| (b, b * r)).unzip())
}

fn assert_close(a: f64, b: f64) -> Result<(), TestCaseError> {
    let ok = (a.is_infinite() && a == b) || (a - b).abs() <= 1e-9 * (1.0 + a.abs());
    prop_assert!(ok, "{a} vs {b}");
    Ok(())
}

fn assert_interval(a: Interval, b: Interval) -> Result<(), TestCaseError> {
    assert_close(a.lower, b.lower)?;
    assert_close(a.upper, b.upper)
}

fn analyze(base: &[f64], head: &[f64]) -> BenchmarkAnalysis {
    analyze_pairs(base, head, &AnalysisOptions::default(), None).unwrap()
}

fn mirrored(v: Verdict) -> Verdict {
    match v {
        Verdict::Slower { practical } => Verdict::Faster { practical },
        Verdict::Faster { practical } => Verdict::Slower { practical },
        other => other,
    }
}

proptest! {
    #[test]
    fn swapping_sides_negates_every_log_bound((base, head) in samples()) {
        let ab = analyze(&base, &head);
        let ba = analyze(&head, &base);
        // Slow runs make the two sides' roles differ (a slow mode is head's doing or base's),
        // so the mirror holds where neither side has one.
        let calm = |a: &BenchmarkAnalysis| a.modes.as_ref().is_none_or(|m| !m.any());
        prop_assume!(calm(&ab) && calm(&ba));
        assert_close(ab.mean_log, -ba.mean_log)?;
        assert_interval(ab.interval, ba.interval.negated())?;
        assert_interval(ab.current_interval, ba.current_interval.negated())?;
        assert_interval(ab.fixed_interval, ba.fixed_interval.negated())?;
        let (hl_ab, hl_ba) = (ab.hodges_lehmann.unwrap(), ba.hodges_lehmann.unwrap());
        assert_close(hl_ab.estimate, -hl_ba.estimate)?;
        assert_interval(hl_ab.interval, hl_ba.interval.negated())?;
        assert_close(ab.e_value, ba.e_value)?;
        prop_assert_eq!(ab.verdict, mirrored(ba.verdict));
    }

    #[test]
    fn a_common_unit_changes_nothing((base, head) in samples(), scale in prop::sample::select(vec![1e-9, 1e-3, 0.5, 7.0, 1e6])) {
        let a = analyze(&base, &head);
        let sb: Vec<f64> = base.iter().map(|x| x * scale).collect();
        let sh: Vec<f64> = head.iter().map(|x| x * scale).collect();
        let s = analyze(&sb, &sh);
        assert_close(a.mean_log, s.mean_log)?;
        assert_close(a.sd_log, s.sd_log)?;
        assert_interval(a.interval, s.interval)?;
        assert_interval(a.fixed_interval, s.fixed_interval)?;
        assert_close(a.change_pct, s.change_pct)?;
        assert_close(a.head_center / a.base_center, s.head_center / s.base_center)?;
        prop_assert_eq!(a.verdict, s.verdict);
    }

    #[test]
    fn more_identical_pairs_never_widen_the_running_intersection(
        (base, head) in samples(),
        extra in 1usize..60,
        which in any::<prop::sample::Index>(),
    ) {
        let d: Vec<f64> = base.iter().zip(&head).map(|(b, h)| (h / b).ln()).collect();
        let repeated = d[which.index(d.len())];
        let mut cs = ConfidenceSequence::from_log_ratios(
            MixtureBoundary::tuned(0.05, 20.0).unwrap(), 0.0, &d).unwrap();
        let mut width = cs.running_interval().width();
        for _ in 0..extra {
            cs.push(repeated).unwrap();
            let next = cs.running_interval().width();
            prop_assert!(next <= width || (next.is_infinite() && width.is_infinite()));
            width = next;
        }
    }

    #[test]
    fn running_interval_lies_inside_every_look((base, head) in samples()) {
        let a = analyze(&base, &head);
        // The estimate is never outside its own interval.
        prop_assert!(a.interval.contains(a.mean_log), "{:?} {}", a.interval, a.mean_log);
        prop_assert!(a.interval.lower >= a.current_interval.lower);
        // With a slow run on a side the worse bound is this round's or wider (§4c).
        if a.modes.as_ref().is_some_and(|m| m.any()) {
            prop_assert!(a.interval.upper >= a.current_interval.upper);
            return Ok(());
        }
        prop_assert!(a.interval.upper <= a.current_interval.upper);
        // Rejecting "no change" by the interval and by the anytime p-value agree.
        // When the latest rounds contradict the earlier ones the current interval is reported,
        // which may contain zero although an earlier look excluded it.
        if !a.contradicted {
            prop_assert_eq!(!a.interval.contains(0.0), a.anytime_p_value <= 0.05 + 1e-12);
        }
    }
}

proptest! {
    #[test]
    fn any_input_gives_a_result_or_a_typed_error(
        base in prop::collection::vec(any::<f64>(), 0..12),
        head in prop::collection::vec(any::<f64>(), 0..12),
    ) {
        // Arbitrary doubles include NaN, ±inf, zero, negatives and subnormals: never a panic.
        let _ = analyze_pairs(&base, &head, &AnalysisOptions::default(), None);
    }

    #[test]
    fn extreme_positive_pairs_never_panic(
        pairs in prop::collection::vec((f64::MIN_POSITIVE..f64::MAX, f64::MIN_POSITIVE..f64::MAX), 2..30),
        mixed in prop::collection::vec((any::<f64>(), any::<f64>()), 0..30),
    ) {
        let (base, head): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
        let a = analyze_pairs(&base, &head, &AnalysisOptions::default(), None).unwrap();
        let _ = a.to_result("extreme", "time", "ns");
        let (base, head): (Vec<f64>, Vec<f64>) = mixed.into_iter().unzip();
        let _ = analyze_pairs(&base, &head, &AnalysisOptions::default(), None);
    }
}
