//! Claims written as prose: "`describe` becomes 25-30% faster", "a ~5x improvement in uri
//! parsing", "speeds up `unique` by 10-20x", "roughly 25% improvement on benchmarks",
//! "This improves performance about 25%". Code blocks are left to the table readers.
//!
//! How sizes read: "N% faster", "N% improvement", "N% speed-up" and "N% time reduction" are
//! N% less time (the way most PRs compute them, `(old − new)/old`); past 100% ("150% faster")
//! only a speed makes sense, so it is 2.5× the speed. "N× faster" is the time divided by N;
//! "N% slower" and "N% regression" are N% more time; "N× slower" N times the time.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::{Claim, Metric, Source, factor_to_time_pct};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid pattern")
}

/// "[-]N[-M] (%|x) [up to two words] faster|slower|…".
static SIZE_THEN_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?:^|[\s(~≈])([+\-−])?(\d+(?:\.\d+)?)(?:\s*(?:-|–|to)\s*(\d+(?:\.\d+)?))?\s*(%|x\b|×)\s+(?:[a-z]+\s+){0,2}?(faster|quicker|slower|speed[- ]?ups?|improvements?|less time|time reduction|reduction in (?:run ?)?time|regression)\b",
    )
});
/// "speeds up X by N[-M](%|x)".
static SPEED_UP_BY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:speeds?|sped)[- ]up\b(?P<obj>.{0,80}?)\bby\s+(?:about|around|roughly|almost|up to|~)?\s*(?P<n>\d+(?:\.\d+)?)(?:\s*(?:-|–|to)\s*(?P<m>\d+(?:\.\d+)?))?\s*(?P<unit>%|x\b|×)",
    )
});
/// "improves (the) performance (of X) (by) (about) N%".
static IMPROVES_BY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\bimproves?\s+(?:the\s+)?performance\b(?P<obj>.{0,60}?)\s(?:by\s+)?(?:about|around|roughly|~)?\s*(?P<n>\d+(?:\.\d+)?)(?P<unit>%|x\b|×)",
    )
});
/// "speed-up is about 10%", "improvement of 3x".
static WORD_THEN_SIZE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:speed[- ]?up|improvement)\s+(?:is|of)\s+(?:about|around|roughly|almost|~)?\s*(?P<n>\d+(?:\.\d+)?)(?P<unit>%|x\b|×)",
    )
});
static BACKTICKED: LazyLock<Regex> = LazyLock::new(|| re(r"`([^`\s][^`]{0,80})`"));
static MACHINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:on|using)\s+(?:an?\s+|my\s+)?((?:AMD|Intel|Apple|Ryzen|Xeon|EPYC|Graviton|aarch64|arm64|x86_64|x86-64|M[1-4]\b)[\w./+ -]{0,40}?)(?:\s+(?:we|it|this|I)\b|[,.;:)]|$)",
    )
});
static FENCE: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*(```|~~~)"));

/// The machine a body names first ("Comparison performed on AMD Ryzen 9800X3D"), for claims
/// whose own line names none.
pub(crate) fn body_machine(lines: &[&str]) -> Option<String> {
    lines
        .iter()
        .find_map(|l| MACHINE.captures(l).map(|c| c[1].trim().to_owned()))
}

pub(crate) fn read(lines: &[&str], taken: &HashSet<usize>) -> Vec<Claim> {
    let body_machine = body_machine(lines);
    let mut out = Vec::new();
    let mut in_code = false;
    for (i, line) in lines.iter().enumerate() {
        if FENCE.is_match(line) {
            in_code = !in_code;
            continue;
        }
        // Quoted replies are someone else's words; a command line is read as the command.
        if in_code
            || taken.contains(&(i + 1))
            || line.trim_start().starts_with('>')
            || line.trim_start().starts_with("/benchgate")
        {
            continue;
        }
        for sentence in split_sentences(line) {
            for claim in sentence_claims(sentence) {
                let machine = MACHINE
                    .captures(sentence)
                    .map(|c| c[1].trim().to_owned())
                    .or_else(|| body_machine.clone());
                out.push(Claim {
                    machine,
                    line: i + 1,
                    quote: sentence.trim().to_owned(),
                    ..claim
                });
            }
        }
    }
    out
}

/// A line cut at sentence ends (". ", "; "), keeping dots inside numbers and names.
fn split_sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if (b == b'.' || b == b';' || b == b'!' || b == b'?')
            && bytes.get(i + 1).is_none_or(|n| *n == b' ')
        {
            out.push(&line[start..=i]);
            start = i + 1;
        }
    }
    if start < line.len() {
        out.push(&line[start..]);
    }
    out
}

/// The claims of one sentence, with `machine`, `line` and `quote` left for the caller.
fn sentence_claims(sentence: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    // Forms whose size follows a verb ("speeds up X by N%"): always a gain.
    for form in [&*SPEED_UP_BY, &*IMPROVES_BY, &*WORD_THEN_SIZE] {
        for c in form.captures_iter(sentence) {
            let whole = c.get(0).expect("match");
            let m = c.name("m").map(|m| m.as_str());
            let Some(pct) = size(&c["n"], m, &c["unit"], Word::Faster, None) else {
                continue;
            };
            spans.push((whole.start(), whole.end()));
            let object = c.name("obj").and_then(|o| name_in(o.as_str()));
            out.push(claim(
                object.or_else(|| name_before(sentence, whole.start())),
                pct,
            ));
        }
    }
    // Where the clause of the next claim starts: "`a` is 30% faster, `b` 2x faster".
    let mut clause = 0;
    for c in SIZE_THEN_WORD.captures_iter(sentence) {
        let whole = c.get(0).expect("match");
        let from = std::mem::replace(&mut clause, whole.end());
        if spans
            .iter()
            .any(|(s, e)| whole.start() < *e && *s < whole.end())
        {
            continue;
        }
        // "in 1.0 we were ~10x slower": a past state, not this change.
        let before = &sentence[..whole.start()].to_lowercase();
        if [" were ", " was ", "used to "]
            .iter()
            .any(|w| before.contains(w))
        {
            continue;
        }
        let word = Word::of(&c[5]);
        let sign = c.get(1).map(|m| m.as_str());
        let Some(pct) = size(&c[2], c.get(3).map(|m| m.as_str()), &c[4], word, sign) else {
            continue;
        };
        let name =
            name_in(&sentence[from..whole.start()]).or_else(|| name_in(&sentence[whole.end()..]));
        out.push(claim(name, pct));
    }
    out
}

fn claim(benchmark: Option<String>, pct: [f64; 2]) -> Claim {
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    Faster,
    Slower,
}

impl Word {
    fn of(word: &str) -> Self {
        let w = word.to_lowercase();
        if w.starts_with("slower") || w.starts_with("regression") {
            Word::Slower
        } else {
            Word::Faster
        }
    }
}

/// The claimed percent change of time, `[low, high]` by size, for "N[-M] unit word".
fn size(n: &str, m: Option<&str>, unit: &str, word: Word, sign: Option<&str>) -> Option<[f64; 2]> {
    let n: f64 = n.parse().ok()?;
    let m: f64 = m.and_then(|m| m.parse().ok()).unwrap_or(n);
    if !(n > 0.0 && m >= n) {
        return None;
    }
    // An explicit "+N% time" is more time whatever the word after it; "-N%" less.
    let word = match sign {
        Some("+") => Word::Slower,
        Some(_) => Word::Faster,
        None => word,
    };
    let one = |x: f64| -> Option<f64> {
        match (unit, word) {
            ("%", Word::Slower) => Some(x),
            ("%", Word::Faster) if x < 100.0 => Some(-x),
            ("%", Word::Faster) => Some(factor_to_time_pct(1.0 + x / 100.0, true)),
            (_, Word::Faster) if x > 1.0 => Some(factor_to_time_pct(x, true)),
            (_, Word::Slower) if x > 1.0 => Some(factor_to_time_pct(x, false)),
            _ => None,
        }
    };
    let (a, b) = (one(n)?, one(m)?);
    Some([a.min(b), a.max(b)])
}

/// A backticked name inside `text`, the object of "speeds up `unique` by".
fn name_in(text: &str) -> Option<String> {
    BACKTICKED.captures(text).map(|c| c[1].to_owned())
}

/// The first backticked name before byte `at` in the sentence, its subject: "`describe` (with
/// default `percentiles`) becomes 25% faster".
fn name_before(sentence: &str, at: usize) -> Option<String> {
    name_in(&sentence[..at])
}

/// The change of `/benchgate claim NAME SIZE [faster|slower]`: a signed percent of time
/// (`-20%`), or a factor with its word (`2x faster`).
pub(crate) fn explicit_change(size_word: &str, rest: &[&str]) -> Option<f64> {
    let word = rest.first().map(|w| w.to_lowercase());
    if let Some(p) = size_word.strip_suffix('%') {
        let v: f64 = p.replace('−', "-").parse().ok()?;
        return match word.as_deref() {
            Some("faster") => Some(-v.abs()),
            Some("slower") => Some(v.abs()),
            _ if p.starts_with(['+', '-', '−']) => Some(v),
            _ => None,
        };
    }
    let f: f64 = size_word
        .strip_suffix(['x', '×', 'X'])?
        .parse()
        .ok()
        .filter(|f: &f64| *f > 0.0)?;
    match word.as_deref() {
        Some("faster") => Some(factor_to_time_pct(f, true)),
        Some("slower") => Some(factor_to_time_pct(f, false)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Vec<(Option<String>, [f64; 2])> {
        sentence_claims(text)
            .into_iter()
            .map(|c| (c.benchmark, c.change_pct))
            .collect()
    }

    #[test]
    fn sizes_read_as_a_change_of_time() {
        assert_eq!(
            one("`parse` is 20% faster"),
            [(Some("parse".into()), [-20.0, -20.0])]
        );
        assert_eq!(one("about 2x faster"), [(None, [-50.0, -50.0])]);
        assert_eq!(one("it is 150% faster"), [(None, [-60.0, -60.0])]);
        assert_eq!(
            one("`x` gets 10% slower"),
            [(Some("x".into()), [10.0, 10.0])]
        );
        assert_eq!(one("a 3x slower path"), [(None, [200.0, 200.0])]);
        assert_eq!(
            one("`describe` becomes 25-30% faster than before"),
            [(Some("describe".into()), [-30.0, -25.0])]
        );
        assert_eq!(
            one("a ~5x asymptotic improvement"),
            [(None, [-80.0, -80.0])]
        );
        assert_eq!(
            one("this can speed up `unique` and `n_unique` by 10-20x."),
            [(Some("unique".into()), [-95.0, -90.0])]
        );
        assert_eq!(
            one("This improves performance about 25%"),
            [(None, [-25.0, -25.0])]
        );
        assert_eq!(
            one("Decompression speedup is about 10%"),
            [(None, [-10.0, -10.0])]
        );
        assert_eq!(
            one("a -40% time reduction in the `req/req` bench"),
            [(Some("req/req".into()), [-40.0, -40.0])]
        );
    }

    #[test]
    fn numbers_that_claim_nothing_are_not_read() {
        assert!(one("coverage stays at 100% and 3 tests were added").is_empty());
        assert!(one("in 1.0 we were ~10x slower").is_empty());
        assert!(one("we bumped the timeout 2x").is_empty());
    }

    #[test]
    fn explicit_sizes() {
        assert_eq!(explicit_change("-20%", &[]), Some(-20.0));
        assert_eq!(explicit_change("+5%", &[]), Some(5.0));
        assert_eq!(explicit_change("20%", &["faster"]), Some(-20.0));
        assert_eq!(explicit_change("20%", &[]), None, "unsigned needs a word");
        assert_eq!(explicit_change("2x", &["faster"]), Some(-50.0));
        assert_eq!(explicit_change("1.5x", &["slower"]), Some(50.0));
        assert_eq!(explicit_change("2x", &[]), None);
    }
}
