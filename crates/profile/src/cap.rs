//! Capping a profile to what a server keeps per side: stacks cut to a depth, then the lightest
//! stacks folded into one catch-all line until the text fits, with every sample still counted.

use serde::{Deserialize, Serialize};

use crate::folded::{Folded, line_len};

/// The frame that stands for every frame cut off below the depth limit.
pub const DEEPER_FRAMES: &str = "[deeper frames]";
/// The stack that holds the samples of every stack dropped to fit the size limit.
pub const OTHER_STACKS: &str = "[other stacks]";

/// How large one side's folded stacks may be.
///
/// The defaults: 256 KiB of text per side keeps a comparison's two profiles (and the flame
/// graph drawn from them) small enough to store with every slower comparison and to open in a
/// browser, while a real profile of a benchmark rarely has that many distinct stacks; 128
/// frames is perf's own call-chain limit (`kernel.perf_event_max_stack`, 127 by default) plus
/// the process's root frame, so only recursion deeper than perf records gets cut, and the cut
/// part of a recursion is the same frame repeated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Most bytes of [`Folded::to_text`]; values below [`Limits::MIN_BYTES`] count as it.
    pub max_bytes: usize,
    /// Most frames in one stack, `[deeper frames]` included; below 1 counts as 1.
    pub max_depth: usize,
}

impl Limits {
    /// The smallest size limit honoured: room for the catch-all line with any `u64` count.
    pub const MIN_BYTES: usize = 64;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 256 * 1024,
            max_depth: 128,
        }
    }
}

/// Folded stacks within [`Limits`], and what was given up to fit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capped {
    pub folded: Folded,
    /// Whether some stack was deeper than `max_depth` and lost its deepest frames.
    pub dropped_frames: bool,
    /// How many distinct stacks (after the depth cut) were folded into `[other stacks]`.
    pub merged_stacks: u64,
}

impl Folded {
    /// These stacks within `limits`: each stack deeper than `max_depth` keeps its root-most
    /// `max_depth - 1` frames and ends in `[deeper frames]`; then, if the text is still larger
    /// than `max_bytes`, the heaviest stacks (ties by text) are kept while they fit and the rest
    /// become one `[other stacks] N` line. `total()` is unchanged.
    pub fn capped(self, limits: Limits) -> Capped {
        let max_depth = limits.max_depth.max(1);
        let max_bytes = limits.max_bytes.max(Limits::MIN_BYTES);
        let mut dropped_frames = false;
        let shallow = if self
            .stacks()
            .all(|(s, _)| s.split(';').count() <= max_depth)
        {
            self
        } else {
            let mut cut = Folded::default();
            for (stack, count) in self.stacks() {
                match stack.match_indices(';').nth(max_depth - 1) {
                    // The (max_depth)th separator: more than max_depth frames.
                    Some(_) => {
                        dropped_frames = true;
                        let kept = match max_depth - 1 {
                            0 => String::new(),
                            k => {
                                let (end, _) = stack.match_indices(';').nth(k - 1).expect(
                                    "a stack with more separators than max_depth has k of them",
                                );
                                format!("{};", &stack[..end])
                            }
                        };
                        cut.add(&format!("{kept}{DEEPER_FRAMES}"), count);
                    }
                    None => cut.add(stack, count),
                }
            }
            cut
        };
        if shallow.text_len() <= max_bytes {
            return Capped {
                folded: shallow,
                dropped_frames,
                merged_stacks: 0,
            };
        }
        let mut heaviest: Vec<(&str, u64)> = shallow.stacks().collect();
        heaviest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        // Room for the catch-all line first: its count is at most the total.
        let mut used = line_len(OTHER_STACKS, shallow.total());
        let mut kept = Folded::default();
        let (mut other, mut merged_stacks, mut fits) = (0, 0, true);
        for (stack, count) in heaviest {
            let len = line_len(stack, count);
            fits = fits && used + len <= max_bytes;
            if fits {
                used += len;
                kept.add(stack, count);
            } else {
                other += count;
                merged_stacks += 1;
            }
        }
        kept.add(OTHER_STACKS, other);
        Capped {
            folded: kept,
            dropped_frames,
            merged_stacks,
        }
    }
}
