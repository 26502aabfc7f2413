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

use crate::comparisons::{self, NotRead, Reading};
use crate::prose::{self, SIZE_THEN_WORD, Way, claim, name_before, name_in};
use crate::sentence_forms::{fractions, from_to, overlaps, verb_by};
use crate::{Claim, Metric, factor_to_time_pct};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid pattern")
}

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

/// The claims of the body's prose, and the sentences that compare rather than claim.
pub(crate) fn read(lines: &[&str], taken: &HashSet<usize>) -> (Vec<Claim>, Vec<NotRead>) {
    let body_machine = body_machine(lines);
    let removed = comparisons::removed_things(lines);
    let mut out = Vec::new();
    let mut not_read = Vec::new();
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
            let mut claims = sentence_claims(sentence);
            match comparisons::reading(sentence, &removed) {
                Reading::Change => {}
                Reading::OldWaySubject => claims.iter_mut().for_each(turn),
                Reading::Compares(compares) => {
                    not_read.push(NotRead {
                        line: i + 1,
                        quote: sentence.trim().to_owned(),
                        compares,
                    });
                    continue;
                }
            }
            for claim in claims {
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
    (out, not_read)
}

/// A change stated of the old way ("X is 20% slower than Y", X removed): the same ratio seen
/// from the new way.
fn turn(claim: &mut Claim) {
    let one = |p: f64| (100.0 / (100.0 + p) - 1.0) * 100.0;
    let [a, b] = claim.change_pct.map(one);
    claim.change_pct = [a.min(b), a.max(b)];
}

/// Abbreviations whose dot ends no sentence ("by approx. 15%").
const ABBREVIATIONS: [&str; 6] = ["approx", "e.g", "i.e", "vs", "ca", "cf"];

/// A line cut at sentence ends (". ", "; "), keeping dots inside numbers, names and
/// abbreviations.
fn split_sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let abbreviation = b == b'.' && {
            let word = line[..i].rsplit(' ').next().unwrap_or("").to_lowercase();
            ABBREVIATIONS.contains(&word.as_str())
        };
        if (b == b'.' || b == b';' || b == b'!' || b == b'?')
            && !abbreviation
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
            let Some(pct) = prose::size_of(&c)
                .and_then(|size| prose::change(Metric::Time, Way::Better, size, false))
            else {
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
    verb_by(sentence, &mut spans, &mut out);
    // Where the clause of the next claim starts: "`a` is 30% faster, `b` 2x faster".
    let mut clause = 0;
    for c in SIZE_THEN_WORD.captures_iter(sentence) {
        let whole = c.get(0).expect("match");
        let from = std::mem::replace(&mut clause, whole.end());
        if overlaps(&spans, whole.start(), whole.end()) {
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
        let word = &c["word"];
        let Some(mut way) = Way::of(word) else {
            continue;
        };
        // An explicit "+N% time" is more time whatever the word after it; "-N%" less.
        match c.name("sign").map(|m| m.as_str()) {
            Some("+") => way = Way::More,
            Some(_) => way = Way::Less,
            None => {}
        }
        let (mid, after) = (&c["mid"], c["after"].trim_start());
        let of_object = ["in ", "of ", "on "]
            .iter()
            .any(|p| after.to_lowercase().starts_with(p));
        let speed = word.to_lowercase();
        let metric = if ["faster", "quicker", "slower"].contains(&speed.as_str()) {
            Some(Metric::Time)
        } else {
            prose::metric_named(mid, sentence)
                .or_else(|| {
                    of_object
                        .then(|| prose::metric_named(after, sentence))
                        .flatten()
                })
                .or_else(|| matches!(way, Way::Better | Way::Worse).then_some(Metric::Time))
        };
        let Some(metric) = metric else {
            continue;
        };
        let Some(size) = prose::size_of(&c) else {
            continue;
        };
        let speed_word = prose::speed_word(mid) || (of_object && prose::speed_word(after));
        let Some(pct) = prose::change(metric, way, size, speed_word) else {
            continue;
        };
        spans.push((whole.start(), whole.end()));
        let name =
            name_in(&sentence[from..whole.start()]).or_else(|| name_in(&sentence[whole.end()..]));
        out.push(Claim {
            metric,
            ..claim(name, pct)
        });
    }
    fractions(sentence, &mut spans, &mut out);
    from_to(sentence, &mut spans, &mut out);
    out
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
