//! Folded stacks, inferno's text format: one `root;caller;leaf COUNT` line per distinct stack.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::ProfileError;

/// Folded stacks: "root;caller;leaf" -> sample count.
///
/// Stacks are kept sorted, so the text form and the serialised form are the same for the same
/// samples. A stack is never empty and never holds a zero count.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Folded {
    stacks: BTreeMap<String, u64>,
}

impl Folded {
    /// Reads inferno's folded format: `a;b;c 42` per line, the count after the last space (a
    /// frame may hold spaces). Repeated stacks add up, blank lines and zero counts are skipped;
    /// a bad line is an error naming its (1-based) number.
    pub fn parse(text: &str) -> Result<Folded, ProfileError> {
        let mut folded = Folded::default();
        for (index, line) in text.lines().enumerate() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.trim().is_empty() {
                continue;
            }
            let bad = |reason: String| ProfileError::Parse {
                line: index + 1,
                reason,
            };
            let (stack, count) = line
                .rsplit_once(' ')
                .ok_or_else(|| bad(format!("expected `frame;frame;… COUNT`, got {line:?}")))?;
            if stack.is_empty() {
                return Err(bad("the stack before the count is empty".into()));
            }
            let count: u64 = count.parse().map_err(|_| {
                bad(format!(
                    "the count {count:?} is not a whole number of samples"
                ))
            })?;
            folded.add(stack, count);
        }
        Ok(folded)
    }

    /// The same format, one line per stack in sorted order; `parse(to_text(x)) == x`.
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(self.text_len());
        for (stack, count) in &self.stacks {
            out.push_str(stack);
            out.push(' ');
            out.push_str(&count.to_string());
            out.push('\n');
        }
        out
    }

    /// The length in bytes of [`Folded::to_text`], without building it.
    pub fn text_len(&self) -> usize {
        self.stacks
            .iter()
            .map(|(stack, count)| line_len(stack, *count))
            .sum()
    }

    /// All samples, over every stack.
    pub fn total(&self) -> u64 {
        self.stacks.values().sum()
    }

    /// Whether there is no sample at all.
    pub fn is_empty(&self) -> bool {
        self.stacks.is_empty()
    }

    /// Adds `other`'s samples to these (several runs of one side become one profile).
    pub fn merge(&mut self, other: &Folded) {
        for (stack, count) in &other.stacks {
            self.add(stack, *count);
        }
    }

    /// The stacks and their counts, sorted by stack.
    pub fn stacks(&self) -> impl Iterator<Item = (&str, u64)> {
        self.stacks.iter().map(|(s, c)| (s.as_str(), *c))
    }

    /// How many distinct stacks there are.
    pub fn len(&self) -> usize {
        self.stacks.len()
    }

    /// Adds `count` samples of `stack`; a zero count or an empty stack adds nothing.
    pub(crate) fn add(&mut self, stack: &str, count: u64) {
        if count == 0 || stack.is_empty() {
            return;
        }
        match self.stacks.get_mut(stack) {
            Some(c) => *c += count,
            None => {
                self.stacks.insert(stack.to_owned(), count);
            }
        }
    }
}

/// Bytes of one `stack COUNT\n` line.
pub(crate) fn line_len(stack: &str, count: u64) -> usize {
    stack.len() + 1 + digits(count) + 1
}

fn digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sums_repeats_and_round_trips() {
        let f = Folded::parse("main;work 3\nmain 1\n\nmain;work 2\r\nprog;[unknown <0x1f>] 4\n")
            .unwrap();
        assert_eq!(f.total(), 10);
        assert_eq!(f.len(), 3);
        assert_eq!(
            f.to_text(),
            "main 1\nmain;work 5\nprog;[unknown <0x1f>] 4\n"
        );
        assert_eq!(Folded::parse(&f.to_text()).unwrap(), f);
        assert_eq!(f.text_len(), f.to_text().len());
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        for (text, line, words) in [
            ("a 1\nnocount\n", 2, "expected"),
            ("a 1\nb 2\na;b x\n", 3, "not a whole number"),
            ("a -1\n", 1, "not a whole number"),
            (" 5\n", 1, "empty"),
        ] {
            let e = Folded::parse(text).unwrap_err().to_string();
            assert!(e.contains(&format!("line {line}:")), "{text:?}: {e}");
            assert!(e.contains(words), "{text:?}: {e}");
        }
    }

    #[test]
    fn merge_adds_counts() {
        let mut a = Folded::parse("m;f 1\nm;g 2\n").unwrap();
        a.merge(&Folded::parse("m;g 3\nm;h 4\n").unwrap());
        assert_eq!(a.to_text(), "m;f 1\nm;g 5\nm;h 4\n");
        assert!(!a.is_empty());
        assert!(Folded::default().is_empty());
    }
}
