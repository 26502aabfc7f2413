//! Dashboard-only presentation: colours and log spreads. Percentages, values, verdict words,
//! ages, durations and short shas come from `benchgate_stats::words`, shared with the comment
//! and the CLI.

use benchgate_stats::words::BenchmarkStanding;

/// A log-scale spread as the percent a typical pair moves, `100(e^s − 1)`.
pub fn log_spread_pct(log: f64) -> f64 {
    benchgate_stats::percent_from_log(log)
}

/// A span of time in seconds, for `words::elapsed`.
pub fn seconds(span: chrono::TimeDelta) -> f64 {
    span.num_milliseconds() as f64 / 1000.0
}

/// The CSS class of a standing (a row's or a benchmark's), for its colour: a grown exact count
/// is as red as a slower time.
pub fn standing_class(s: BenchmarkStanding) -> &'static str {
    match s {
        BenchmarkStanding::Slower => "slower",
        BenchmarkStanding::Faster => "faster",
        BenchmarkStanding::NoChange | BenchmarkStanding::WithinTolerance => "same",
        BenchmarkStanding::NoResultYet
        | BenchmarkStanding::BelowResolution
        | BenchmarkStanding::NotAnalysed
        | BenchmarkStanding::OneSided
        | BenchmarkStanding::NotGated => "open",
    }
}
