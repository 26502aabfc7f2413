//! Dashboard-only presentation: ages, durations and verdict colours. Percentages, values,
//! verdict words and short shas come from `benchgate_stats::words`, shared with the comment
//! and the CLI.

use benchgate_api::VerdictKind;
use chrono::{DateTime, Utc};

/// A log-scale spread as the percent a typical pair moves, `100(e^s − 1)`.
pub fn log_spread_pct(log: f64) -> f64 {
    benchgate_stats::percent_from_log(log)
}

/// "just now", "42 s ago", "5 min ago", "3 h ago", "12 d ago".
pub fn age(then: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let ago = duration_words((now - then).num_seconds().max(0));
    if ago == "0 s" {
        "just now".into()
    } else {
        format!("{ago} ago")
    }
}

/// A number of seconds in the largest unit that fits: "42 s", "5 min", "3 h", "12 d".
pub fn duration_words(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 86_400 => format!("{} h", s / 3600),
        s => format!("{} d", s / 86_400),
    }
}

/// The CSS class of a verdict, for its colour.
pub fn verdict_class(kind: VerdictKind) -> &'static str {
    match kind {
        VerdictKind::Slower => "slower",
        VerdictKind::Faster => "faster",
        VerdictKind::Equivalent | VerdictKind::Exact => "same",
        VerdictKind::NoResultYet
        | VerdictKind::BelowResolution
        | VerdictKind::NotAnalysed
        | VerdictKind::OnlyInBase
        | VerdictKind::OnlyInHead => "open",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_pick_the_largest_unit() {
        assert_eq!(duration_words(42), "42 s");
        assert_eq!(duration_words(301), "5 min");
        assert_eq!(duration_words(3 * 86_400 + 5), "3 d");
    }
}
