//! A measured round in the wire form the server stores: every value of both sides with the
//! position its side ran in, so the server can pair and check order effects.

use std::time::Duration;

use benchgate_api::agent::{RoundUpload, UploadedSample};
use benchgate_api::{Measurement, Side};
use benchgate_harness::rounds::Round;
use benchgate_harness::samples::one_per_series;

/// Benchmark name of the build-time samples.
pub const BUILD_BENCHMARK: &str = "build";
/// Metric name of the build time of one side, in nanoseconds.
pub const BUILD_TIME: &str = "build_time";

/// The upload of one measured round of `attempt`.
pub fn round_upload(round: &Round, lease_token: &str, attempt: i64) -> RoundUpload {
    let mut samples = Vec::new();
    for (position, side) in round.order.iter().enumerate() {
        let measured = match side {
            Side::Base => &round.base,
            Side::Head => &round.head,
        };
        // One value per benchmark and metric and side: the run, never its iterations (the
        // store keeps one sample per round and side, and pairs them as they are).
        samples.extend(
            one_per_series(measured)
                .into_iter()
                .map(|m| UploadedSample {
                    side: *side,
                    position: position as i64,
                    measurement: m,
                }),
        );
    }
    RoundUpload {
        lease_token: lease_token.to_owned(),
        attempt,
        round: round.index as i64,
        base_first: round.base_first(),
        samples,
    }
}

/// Build times of both sides as samples (base built first), carried by round 0's upload.
pub fn build_time_samples(times: Option<[Duration; 2]>) -> Vec<UploadedSample> {
    let Some(times) = times else {
        return Vec::new();
    };
    [Side::Base, Side::Head]
        .into_iter()
        .zip(times)
        .enumerate()
        .map(|(position, (side, time))| UploadedSample {
            side,
            position: position as i64,
            measurement: Measurement {
                benchmark: BUILD_BENCHMARK.into(),
                metric: BUILD_TIME.into(),
                unit: "ns".into(),
                value: time.as_nanos() as f64,
                lower: None,
                upper: None,
                direction: Default::default(),
                run: None,
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(value: f64) -> Measurement {
        Measurement {
            benchmark: "command".into(),
            metric: "wall_time".into(),
            unit: "ns".into(),
            value,
            lower: None,
            upper: None,
            direction: Default::default(),
            run: None,
        }
    }

    #[test]
    fn positions_follow_the_order_the_sides_ran_in() {
        let round = Round {
            index: 3,
            order: [Side::Head, Side::Base],
            base: vec![m(1.0)],
            head: vec![m(2.0)],
            load_wait: None,
        };
        let up = round_upload(&round, "lease", 2);
        assert_eq!((up.round, up.attempt, up.base_first), (3, 2, false));
        let got: Vec<_> = up
            .samples
            .iter()
            .map(|s| (s.side, s.position, s.measurement.value))
            .collect();
        assert_eq!(got, vec![(Side::Head, 0, 2.0), (Side::Base, 1, 1.0)]);
    }

    #[test]
    fn a_side_that_reports_repetitions_uploads_their_mean_once() {
        // A harness with repetitions (go -count, Google Benchmark, pyperf) in one run: the
        // store would keep the first and drop the rest; the run's mean is what counts.
        let round = Round {
            index: 0,
            order: [Side::Base, Side::Head],
            base: vec![m(1.0), m(3.0), m(2.0)],
            head: vec![m(4.0)],
            load_wait: None,
        };
        let up = round_upload(&round, "lease", 1);
        let got: Vec<_> = up
            .samples
            .iter()
            .map(|s| (s.side, s.measurement.value))
            .collect();
        assert_eq!(got, vec![(Side::Base, 2.0), (Side::Head, 4.0)]);
    }

    #[test]
    fn build_times_are_nanoseconds_per_side() {
        let s = build_time_samples(Some([Duration::from_millis(2), Duration::from_millis(3)]));
        assert_eq!(s[0].side, Side::Base);
        assert_eq!(s[1].measurement.value, 3e6);
        assert!(build_time_samples(None).is_empty());
    }
}
