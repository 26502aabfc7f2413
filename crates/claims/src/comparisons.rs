//! What a body compares rather than changes: "compared to my previous pull request", "faster
//! than `serde_json`", "to compare the work between c69b1373 and edfc86ac". Such a line is not
//! the PR's claim; it is listed as "not read as a claim (compares X with Y)" so its author can
//! restate it with `/benchgate claim`. When the thing compared is the old way the PR removes
//! ("index lookups are 20% slower than unpacking" in a PR that removes index lookups), the
//! claim is read with the sign of the PR's change.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid pattern")
}

/// A line that looks like a claim but compares two things neither of which is this change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotRead {
    /// 1-based line of the body, and that line (or sentence), trimmed.
    pub line: usize,
    pub quote: String,
    /// The two things it compares, as written.
    pub compares: [String; 2],
}

impl NotRead {
    /// "compares `a` with `b`", the words the report shows.
    pub fn words(&self) -> String {
        format!("compares {} with {}", self.compares[0], self.compares[1])
    }
}

static BACKTICKED: LazyLock<Regex> = LazyLock::new(|| re(r"`[^`\s][^`]{0,80}`"));
/// "than X", the thing compared with.
static THAN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\bthan\s+(?:the\s+|a\s+|an\s+)?(?P<obj>[^,.;:()!?]{1,50}?)(?:\s+(?:on|in|for|when|with|across)\b|[,.;:()!?]|$)",
    )
});
/// "Compared to X, …", "vs X", "relative to X".
static COMPARED_TO: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:compared\s+(?:to|with)|in\s+comparison\s+(?:to|with)|relative\s+to|as\s+opposed\s+to)\s+(?:the\s+)?(?P<obj>[^,.;:()]{1,60})",
    )
});
/// "compare … between A and B", introducing a table of two other revisions.
static COMPARE_BETWEEN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\bcompar\w*\s+(?:\w+\s+){0,3}?between\s+`?(?P<a>[^\s`,]+)`?\s+and\s+`?(?P<b>[^\s`,.]+)`?",
    )
});
/// A size that would make a claim: "20%", "2x", "3 times", "1/4 the".
static SIZE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\d+(?:\.\d+)?\s*(?:%|x\b|×|times\b|-fold\b)|\b\d+/\d+\s+the\b"));
/// Words naming the base of this change: what it is compared with is itself, before.
static OLD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:before|previously|now|today|it\s+(?:was|used|did)|they\s+were|(?:the\s+|my\s+|our\s+)?(?:old|previous|current|original|existing|prior|present|earlier|former)\b|master\b|main\b|baseline\b|base\b|head\b|upstream\b|the\s+(?:last|latest)\s+release)",
    )
});
/// An alternative, even when called "previous": another PR, attempt or branch.
static ALTERNATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(?:pull\s+request|PR\b|#\d+|attempt|approach|branch|proposal|alternative)")
});
/// What the PR says it removes or replaces: "removes index lookups", "instead of `Vec`".
static REMOVED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:remov\w*|replac\w*|drop(?:s|ped|ping)?|get(?:s|ting)?\s+rid\s+of|instead\s+of|no\s+longer\s+us\w*|avoid\w*)\s+(?:the\s+|all\s+)?`?(?P<what>[\w:.-]+(?:\s+[\w:.-]+)?)",
    )
});

/// How a sentence's sizes relate to the change.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reading {
    /// The sentence speaks of this change (or compares with its base).
    Change,
    /// Its subject is the old way the PR removes: the sign of its sizes is turned.
    OldWaySubject,
    /// It compares two things neither of which is this change.
    Compares([String; 2]),
}

/// The words the PR says it removes, over the whole body (lower case, two at most each).
pub(crate) fn removed_things(lines: &[&str]) -> Vec<String> {
    lines
        .iter()
        .flat_map(|l| REMOVED.captures_iter(l).map(|c| c["what"].to_lowercase()))
        .collect()
}

fn is_old(obj: &str) -> bool {
    OLD.is_match(obj.trim()) && !ALTERNATIVE.is_match(obj)
}

fn mentions_removed(text: &str, removed: &[String]) -> bool {
    let text = text.to_lowercase();
    removed.iter().any(|r| {
        r.split_whitespace()
            .filter(|w| w.len() > 3)
            .any(|w| text.contains(w.trim_end_matches('s')))
    })
}

/// The subject of a comparison: the words before its size (or its "than"), at most six.
fn subject(before: &str) -> String {
    if let Some(name) = BACKTICKED.find(before) {
        return name.as_str().to_owned();
    }
    let words: Vec<&str> = before
        .split_whitespace()
        .filter(|w| !["is", "are", "was", "were", "be", "now", "~"].contains(w))
        .collect();
    let from = words.len().saturating_sub(6);
    let s = words[from..].join(" ");
    if s.is_empty() {
        "this change".to_owned()
    } else {
        s
    }
}

/// How to read one sentence: a change, a change stated of the old way, or a comparison.
pub(crate) fn reading(sentence: &str, removed: &[String]) -> Reading {
    let Some(size) = SIZE.find(sentence) else {
        return Reading::Change;
    };
    if let Some(c) = COMPARED_TO.captures(sentence) {
        let obj = c["obj"].trim();
        if !is_old(obj) {
            return Reading::Compares(["this change".to_owned(), obj.to_owned()]);
        }
    }
    if let Some(c) = THAN.captures(sentence) {
        let obj = c["obj"].trim().trim_matches('`');
        // "dropped by more than 50%": a size qualified, not a thing compared with.
        if is_old(obj) || obj.starts_with(|ch: char| ch.is_ascii_digit() || ch == '~') {
            return Reading::Change;
        }
        let before = &sentence[..size.start()];
        if mentions_removed(before, removed) {
            return Reading::OldWaySubject;
        }
        if mentions_removed(obj, removed) {
            return Reading::Change;
        }
        return Reading::Compares([subject(before), obj.to_owned()]);
    }
    Reading::Change
}

/// Per line, the comparison a block is introduced with: "to compare the work between A and
/// B" within the eight lines above a table or a code block of tool output.
pub(crate) fn introduced_comparison(lines: &[&str]) -> Vec<Option<(usize, [String; 2])>> {
    let mut out: Vec<Option<(usize, [String; 2])>> = vec![None; lines.len()];
    let mut current: Option<(usize, [String; 2])> = None;
    let mut since = 0usize;
    for (i, line) in lines.iter().enumerate() {
        if let Some(c) = COMPARE_BETWEEN.captures(line) {
            current = Some((i, [c["a"].to_owned(), c["b"].to_owned()]));
            since = 0;
        } else if line.trim().starts_with('#') {
            current = None;
        }
        since += 1;
        // Past eight lines of prose, a new paragraph speaks for itself.
        if since > 8 && line.trim().is_empty() {
            current = None;
        }
        out[i] = current.clone();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_with_the_base_are_the_change() {
        for s in [
            "The new implementation is approximately 2x faster than the previous one.",
            "`parse` is 20% faster than before",
            "about 3x faster than master",
        ] {
            assert_eq!(reading(s, &[]), Reading::Change, "{s}");
        }
    }

    #[test]
    fn comparisons_with_something_else_are_not_read() {
        assert_eq!(
            reading("`decode` is 30% faster than serde_json on this input", &[]),
            Reading::Compares(["`decode`".into(), "serde_json".into()])
        );
        let r = reading(
            "Compared to my previous pull request, this will run in 1/4 the time.",
            &[],
        );
        assert_eq!(
            r,
            Reading::Compares(["this change".into(), "my previous pull request".into()])
        );
    }

    /// The wrong sign of issue 57, reworded: the subject is what the PR removes.
    #[test]
    fn the_old_way_as_subject_turns_the_sign() {
        let removed = removed_things(&["This removes the hash lookups from the loop."]);
        assert_eq!(
            reading(
                "Hash lookups are ~20% slower than a linear scan here",
                &removed
            ),
            Reading::OldWaySubject
        );
    }

    #[test]
    fn a_table_introduced_as_a_comparison_of_two_other_revisions() {
        let lines = [
            "I ran these to compare the work between c69b1373 and edfc86ac.",
            "",
            "    name  c69b1373 ns/iter  edfc86ac ns/iter  diff ns/iter  diff %",
        ];
        let marks = introduced_comparison(&lines);
        assert_eq!(
            marks[2],
            Some((0, ["c69b1373".to_owned(), "edfc86ac".to_owned()]))
        );
    }
}
