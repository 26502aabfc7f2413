//! Which of the suite's benchmarks a claim names: exact, then the same name without harness
//! decoration (`Benchmark` prefix, Go's `-8` GOMAXPROCS suffix, libtest's `test `), then a
//! unique suffix at a path boundary. Never a guess: two candidates are ambiguous, none is
//! unmatched, and both are listed as such.

/// How a claim's name met the suite's series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match<'a> {
    /// The series of that name (exactly, or once decoration is stripped).
    Exact(&'a str),
    /// The one series whose name ends with the claim's at a `/`, `:` or `.` boundary.
    Suffix(&'a str),
    /// The claim names no benchmark and the suite has exactly one.
    Only(&'a str),
    /// Several series end with the claim's name.
    Ambiguous(Vec<&'a str>),
    Unmatched,
}

impl<'a> Match<'a> {
    /// The series matched, if one was.
    pub fn series(&self) -> Option<&'a str> {
        match self {
            Match::Exact(s) | Match::Suffix(s) | Match::Only(s) => Some(s),
            Match::Ambiguous(_) | Match::Unmatched => None,
        }
    }
}

/// The name without Go's GOMAXPROCS suffix and libtest's `test `: `pkg.BenchmarkParse-8` →
/// `pkg.BenchmarkParse`.
fn undecorated(name: &str) -> &str {
    let name = name.trim().trim_matches('`');
    let name = name.strip_prefix("test ").unwrap_or(name);
    match name.rsplit_once('-') {
        Some((stem, procs))
            if !stem.is_empty()
                && !procs.is_empty()
                && procs.chars().all(|c| c.is_ascii_digit()) =>
        {
            stem
        }
        _ => name,
    }
}

/// The name without any decoration: `BenchmarkParse-8` → `Parse`, `test a::b` → `a::b`.
fn bare(name: &str) -> &str {
    let name = undecorated(name);
    name.strip_prefix("Benchmark").unwrap_or(name)
}

/// Whether `series` ends with `want` where a name starts: after `/`, `:`, `.` or Go's
/// `Benchmark`.
fn ends_at_boundary(series: &str, want: &str) -> bool {
    let Some(head) = series.strip_suffix(want) else {
        return false;
    };
    !head.is_empty()
        && (head.ends_with(['/', ':', '.']) || head.ends_with(".Benchmark") || head == "Benchmark")
}

/// The series among `series` that `claimed` names.
pub fn match_name<'a>(claimed: Option<&str>, series: &[&'a str]) -> Match<'a> {
    let Some(claimed) = claimed else {
        return match series {
            [only] => Match::Only(only),
            _ => Match::Unmatched,
        };
    };
    if let Some(s) = series.iter().find(|s| **s == claimed) {
        return Match::Exact(s);
    }
    let want = bare(claimed);
    if want.is_empty() {
        return Match::Unmatched;
    }
    let same: Vec<&'a str> = series.iter().copied().filter(|s| bare(s) == want).collect();
    if let [one] = same.as_slice() {
        return Match::Exact(one);
    }
    let wants = [undecorated(claimed), want];
    let ends: Vec<&'a str> = series
        .iter()
        .copied()
        .filter(|s| wants.iter().any(|w| ends_at_boundary(undecorated(s), w)))
        .collect();
    match ends.as_slice() {
        [] if same.len() > 1 => Match::Ambiguous(same),
        [] => Match::Unmatched,
        [one] => Match::Suffix(one),
        _ => Match::Ambiguous(ends),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_exactly_then_bare_then_by_a_unique_suffix() {
        let series = [
            "BenchmarkMetric-8",
            "req/req",
            "req_short/req_short",
            "decode/kodim02.png",
            "github.com/minio/minio/cmd.BenchmarkDataUpdateTracker-12",
        ];
        let minio = "github.com/minio/minio/cmd.BenchmarkDataUpdateTracker-12";
        assert_eq!(
            match_name(Some("BenchmarkDataUpdateTracker"), &series),
            Match::Suffix(minio)
        );
        assert_eq!(
            match_name(Some("DataUpdateTracker-4"), &series),
            Match::Suffix(minio)
        );
        assert_eq!(match_name(Some("UpdateTracker"), &series), Match::Unmatched);
        assert_eq!(
            match_name(Some("req/req"), &series),
            Match::Exact("req/req")
        );
        assert_eq!(
            match_name(Some("BenchmarkMetric"), &series),
            Match::Exact("BenchmarkMetric-8")
        );
        assert_eq!(
            match_name(Some("Metric-32"), &series),
            Match::Exact("BenchmarkMetric-8")
        );
        assert_eq!(
            match_name(Some("kodim02.png"), &series),
            Match::Suffix("decode/kodim02.png")
        );
        assert_eq!(match_name(Some("req"), &series), Match::Suffix("req/req"));
        assert_eq!(
            match_name(Some("short"), &series),
            Match::Unmatched,
            "not at a boundary"
        );
        assert_eq!(match_name(Some("parse"), &series), Match::Unmatched);
        assert_eq!(match_name(None, &series), Match::Unmatched);
        assert_eq!(match_name(None, &["only"]), Match::Only("only"));
        let twins = ["a/parse", "b/parse"];
        assert_eq!(
            match_name(Some("parse"), &twins),
            Match::Ambiguous(vec!["a/parse", "b/parse"])
        );
    }
}
