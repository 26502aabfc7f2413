//! Sizes in prose with the metric they change: "reduces memory usage by ~33%", "a 25-28%
//! increase in throughput", "up to 8 times faster", "halves the allocations", "memory usage
//! drops from 28.6 MB to 25.1 MB", "by about two thirds". What a clause measures comes from
//! its words (memory, allocations, throughput, time); which way it moves from its verb or
//! noun (reduce, increase, improve, faster, slower).

use std::sync::LazyLock;

use regex::{Captures, Regex};

use crate::{Claim, Metric, Source, factor_to_time_pct, metric_of_unit};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid pattern")
}

/// Which way a clause says its metric moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Way {
    /// Faster, an improvement, a boost: less time or memory, more throughput.
    Better,
    /// Slower, a regression.
    Worse,
    /// The metric's value goes down (reduce, decrease, drop, less).
    Less,
    /// The metric's value goes up (increase, more, higher).
    More,
}

impl Way {
    pub(crate) fn of(word: &str) -> Option<Way> {
        let w = word.to_lowercase();
        let starts = |list: &[&str]| list.iter().any(|p| w.starts_with(p));
        if starts(&["slower", "regress"]) {
            Some(Way::Worse)
        } else if starts(&[
            "faster", "quicker", "speed", "sped", "improv", "boost", "gain",
        ]) {
            Some(Way::Better)
        } else if starts(&[
            "reduc", "decreas", "cut", "lower", "drop", "shr", "sav", "less", "fewer", "small",
            "halv",
        ]) {
            Some(Way::Less)
        } else if starts(&["increas", "rais", "more", "higher", "grow"]) {
            Some(Way::More)
        } else {
            None
        }
    }
}

/// A size as written: percent or factor, `[low, high]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Size {
    Percent([f64; 2]),
    Factor([f64; 2]),
}

static ALLOC_WORDS: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\balloc(?:ation|ated|s\b|ating)"));
static MEMORY_ALLOC: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\bmemory\s+alloc"));
static BYTE_UNITS: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\d\s*(?:[kmgt]i?b|bytes)\b"));
static MEMORY_WORDS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:memory|ram|rss|heap|footprint|bytes|vmhwm|[kmg]ib?\s+of)\b"));
static THROUGHPUT_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(?:throughput|requests?\s+per\s+second|req/s|ops/s|rps|qps|bandwidth|[kmg]?b/s)\b")
});
static TIME_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:time|times|runtime|run-time|latency|duration|wall|cpu|seconds|elapsed|performance|speed|fast(?:er)?|slow(?:er)?)\b",
    )
});
/// Words of speed as such: with "increase" they mean better, with "decrease" worse.
static SPEED_WORDS: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\b(?:performance|speed|perf)\b"));

/// The metric a clause names, most specific first; `None` when it names none.
pub(crate) fn metric_named(text: &str, sentence: &str) -> Option<Metric> {
    if ALLOC_WORDS.is_match(text) {
        // "allocations reduced 75% (16 GB -> 4 GB)", "memory allocation": allocated bytes
        // are memory.
        return Some(
            if BYTE_UNITS.is_match(sentence) || MEMORY_ALLOC.is_match(text) {
                Metric::Memory
            } else {
                Metric::Allocations
            },
        );
    }
    if MEMORY_WORDS.is_match(text) {
        return Some(Metric::Memory);
    }
    if THROUGHPUT_WORDS.is_match(text) {
        return Some(Metric::Throughput);
    }
    TIME_WORDS.is_match(text).then_some(Metric::Time)
}

/// The percent change of `metric`'s value for a size moved `way`; `None` when it makes no
/// sense (a 150% reduction) or the clause says neither what nor which way.
pub(crate) fn change(metric: Metric, way: Way, size: Size, speed_word: bool) -> Option<[f64; 2]> {
    // "a 5% performance increase": more performance is better, whatever the metric.
    let way = match (way, speed_word) {
        (Way::More, true) => Way::Better,
        (Way::Less, true) => Way::Worse,
        (w, _) => w,
    };
    let lower_is_better = metric != Metric::Throughput;
    let up = match way {
        Way::More => true,
        Way::Less => false,
        Way::Better => !lower_is_better,
        Way::Worse => lower_is_better,
    };
    let one = |x: f64| -> Option<f64> {
        match size {
            Size::Percent(_) if up => Some(x),
            Size::Percent(_) if x < 100.0 => Some(-x),
            // "150% faster": only a speed can grow past 100%: 2.5 times the speed.
            Size::Percent(_) if way == Way::Better => {
                Some(factor_to_time_pct(1.0 + x / 100.0, true))
            }
            Size::Percent(_) => None,
            Size::Factor(_) if x <= 1.0 => None,
            Size::Factor(_) if up => Some((x - 1.0) * 100.0),
            Size::Factor(_) => Some((1.0 / x - 1.0) * 100.0),
        }
    };
    let [n, m] = match size {
        Size::Percent(v) | Size::Factor(v) => v,
    };
    if !(n > 0.0 && m >= n) {
        return None;
    }
    let (a, b) = (one(n)?, one(m)?);
    Some([a.min(b), a.max(b)])
}

/// The size of a match's `n`, `m`, `unit` (or `frac`) groups.
pub(crate) fn size_of(c: &Captures<'_>) -> Option<Size> {
    if let Some(frac) = c.name("frac") {
        let f = frac.as_str().to_lowercase();
        let pct = if f.starts_with("two") {
            200.0 / 3.0
        } else if f.contains("third") {
            100.0 / 3.0
        } else if f.starts_with("three") {
            75.0
        } else if f.contains("quarter") {
            25.0
        } else {
            50.0
        };
        return Some(Size::Percent([pct, pct]));
    }
    let n: f64 = c.name("n")?.as_str().parse().ok()?;
    let m: f64 = c
        .name("m")
        .and_then(|m| m.as_str().parse().ok())
        .unwrap_or(n);
    Some(if c.name("unit")?.as_str() == "%" {
        Size::Percent([n, m])
    } else {
        Size::Factor([n, m])
    })
}

/// A size: "20%", "10-15%", "3% ~ 12%", "75%+", "2x", "8 times", "3-fold".
const SIZE: &str = r"(?P<n>\d+(?:\.\d+)?)\s*%?(?:\s*(?:-|–|~|to)\s*(?P<m>\d+(?:\.\d+)?))?\s*(?P<unit>%|x\b|×|\s*times\b|-fold\b)\+?";
const QUALIFIER: &str = r"(?:(?:about|around|roughly|approx\.?|approximately|nearly|almost|up\s+to|over|more\s+than|some|~|≈)\s*)*";

/// "reduces memory usage by ~33%", "allocations reduced about 75%", "boost throughput by
/// 1-2%", "cut allocations by two thirds".
pub(crate) static VERB_BY: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b(?P<verb>reduc\w*|cut(?:s|ting)?|decreas\w*|lower(?:s|ed|ing)?|drop(?:s|ped|ping)?|shr[iu]nk\w*|sav(?:es|ed|ing)|increas\w*|improv\w*|boost\w*|rais(?:es|ed|ing))\b(?P<obj>[^.;]{{0,80}}?)\s(?P<by>by\s+)?{QUALIFIER}(?:{SIZE}|(?P<frac>two[ -]thirds|(?:a|one)[ -]third|half|(?:a|one)[ -]quarter|three[ -]quarters))"
    ))
});
/// "… and CPU time by 10%", going on after a [`VERB_BY`].
pub(crate) static AND_BY: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)^\s*,?\s*and\s+(?P<obj>[^.;,]{{1,40}}?)\s+by\s+{QUALIFIER}{SIZE}"
    ))
});
/// "a 25-28% increase in throughput", "up to 8 times faster", "4.51% runtime decrease".
pub(crate) static SIZE_THEN_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)(?:^|[\s(~≈])(?P<sign>[+\-−])?{SIZE}\s+(?P<mid>(?:[a-z/-]+\s+){{0,2}}?)(?P<word>faster|quicker|slower|speed[- ]?ups?|improvements?|increases?|decreases?|reductions?|boosts?|gains?|regressions?|less|fewer|more|lower|higher|smaller)\b(?P<after>(?:\s+[\w/-]+){{0,4}})"
    ))
});
/// "halves the allocations", "cuts memory in half".
pub(crate) static HALVES: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(?:halv(?:es|ed|ing)|cuts?\s+in\s+half)\s+(?P<obj>[\w\s/-]{0,40})")
});
/// "memory usage to ~ half", "reduces the time to a third".
pub(crate) static TO_FRACTION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?P<verb>reduc\w*|cut\w*|drop\w*|lower\w*|shr[iu]nk\w*|brings?|down)\b(?P<obj>[^.;]{0,60}?)\bto\s+(?:~\s*|about\s+|roughly\s+|around\s+)?(?P<frac>(?:a|one)\s+half|half|(?:a|one)\s+third|(?:a|one)\s+quarter)\b",
    )
});
/// "from 28.6 MB (main) to 25.1 MB", "from 1.9s to 1s".
pub(crate) static FROM_TO: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\bfrom\s+~?\s*(?P<a>\d[\d_,]*(?:\.\d+)?)\s*(?P<ua>[a-zµμ/]+)?(?:\s*\([^)]*\))?\s+to\s+~?\s*(?P<b>\d[\d_,]*(?:\.\d+)?)\s*(?P<ub>[a-zµμ/]+)?",
    )
});
/// "6_342 -> 4_741 (25%)", "16 GB -> 4GB".
pub(crate) static ARROW: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?:^|[\s(:])(?P<a>\d[\d_,]*(?:\.\d+)?)\s*(?P<ua>[a-zµμ/]+)?\s*(?:->|→|=>)\s*(?P<b>\d[\d_,]*(?:\.\d+)?)\s*(?P<ub>[a-zµμ/]+)?",
    )
});
/// Words that make two bare numbers a measurement ("The improvement 6_342 -> 4_741").
static PERF_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:improv\w*|faster|slower|speed\w*|time|runtime|memory|throughput|latency|allocations?)\b",
    )
});

pub(crate) fn speed_word(text: &str) -> bool {
    SPEED_WORDS.is_match(text)
}

fn number(text: &str) -> Option<f64> {
    text.replace(['_', ','], "").parse().ok()
}

/// The change of a "from A to B" (or "A -> B") match: same units (or one given), the metric
/// from the unit or the sentence's words.
pub(crate) fn from_to(c: &Captures<'_>, sentence: &str) -> Option<(Metric, f64)> {
    let (a, b) = (number(&c["a"])?, number(&c["b"])?);
    let unit = match (c.name("ua"), c.name("ub")) {
        (Some(x), Some(y)) if x.as_str().eq_ignore_ascii_case(y.as_str()) => Some(x.as_str()),
        (Some(_), Some(_)) => return None,
        (Some(x), None) | (None, Some(x)) => Some(x.as_str()),
        (None, None) => None,
    };
    let metric = match unit {
        Some(u) => metric_of_unit(u)?,
        None if PERF_WORDS.is_match(sentence) => {
            metric_named(sentence, sentence).unwrap_or(Metric::Time)
        }
        None => return None,
    };
    (a > 0.0 && a != b).then(|| (metric, (b / a - 1.0) * 100.0))
}

/// A backticked name, the subject or object of a sentence.
static BACKTICKED: LazyLock<Regex> = LazyLock::new(|| re(r"`([^`\s][^`]{0,80})`"));

/// A claim of a sentence: `pct` of time, as the sentence said it, its place filled in later.
pub(crate) fn claim(benchmark: Option<String>, pct: [f64; 2]) -> Claim {
    Claim {
        benchmark,
        metric: Metric::Time,
        change_pct: pct,
        runs: None,
        machine: None,
        source: Source::Sentence,
        line: 0,
        quote: String::new(),
    }
}

/// A backticked name inside `text`, the object of "speeds up `unique` by".
pub(crate) fn name_in(text: &str) -> Option<String> {
    BACKTICKED.captures(text).map(|c| c[1].to_owned())
}

/// The first backticked name before byte `at` in the sentence, its subject: "`describe` (with
/// default `percentiles`) becomes 25% faster".
pub(crate) fn name_before(sentence: &str, at: usize) -> Option<String> {
    name_in(&sentence[..at])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ways_and_metrics_make_a_signed_change() {
        let p = |n| Size::Percent([n, n]);
        assert_eq!(
            change(Metric::Memory, Way::Less, p(33.0), false),
            Some([-33.0, -33.0])
        );
        assert_eq!(
            change(Metric::Throughput, Way::More, p(25.0), false),
            Some([25.0, 25.0])
        );
        assert_eq!(
            change(Metric::Throughput, Way::Better, p(2.0), false),
            Some([2.0, 2.0])
        );
        assert_eq!(
            change(Metric::Time, Way::More, p(5.0), true),
            Some([-5.0, -5.0])
        );
        assert_eq!(change(Metric::Time, Way::Less, p(150.0), false), None);
        assert_eq!(
            change(Metric::Time, Way::Better, Size::Factor([8.0, 8.0]), false),
            Some([-87.5, -87.5])
        );
    }

    #[test]
    fn metrics_come_from_the_words() {
        let m = |t: &str| metric_named(t, t);
        assert_eq!(m("reduce allocated objects"), Some(Metric::Allocations));
        assert_eq!(
            m("allocations reduced (16 GB -> 4 GB)"),
            Some(Metric::Memory)
        );
        assert_eq!(m("memory usage"), Some(Metric::Memory));
        assert_eq!(m("in throughput"), Some(Metric::Throughput));
        assert_eq!(m("cold start time"), Some(Metric::Time));
        assert_eq!(m("the widget count"), None);
    }
}
