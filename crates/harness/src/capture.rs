//! Keeping a child's output up to a fixed number of bytes while it arrives in chunks, so a chatty
//! benchmark can neither block on a full pipe nor exhaust the runner's memory.

use serde::{Deserialize, Serialize};

/// Which end of the stream to keep once it exceeds the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The first bytes: what a parser of the harness output needs.
    Head,
    /// The last bytes: what explains a failure.
    Tail,
}

/// Output of one stream, possibly cut to the cap.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Captured {
    pub bytes: Vec<u8>,
    /// How many bytes the stream carried in total.
    pub total: u64,
}

impl Captured {
    /// Whether bytes were dropped to stay under the cap.
    pub fn truncated(&self) -> bool {
        self.total > self.bytes.len() as u64
    }

    /// The kept bytes as text, invalid UTF-8 replaced.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// The last `lines` lines of the kept text, for error messages.
    pub fn tail_lines(&self, lines: usize) -> String {
        let text = self.text();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

/// A stream being captured: chunks are pushed as they are read, at most `cap` bytes are kept.
#[derive(Debug)]
pub struct Capture {
    cap: usize,
    keep: Keep,
    out: Captured,
}

impl Capture {
    /// An empty capture keeping at most `cap` bytes from the `keep` end.
    pub fn new(cap: usize, keep: Keep) -> Self {
        Capture {
            cap,
            keep,
            out: Captured::default(),
        }
    }

    /// Adds the next chunk of the stream.
    pub fn push(&mut self, chunk: &[u8]) {
        self.out.total += chunk.len() as u64;
        match self.keep {
            Keep::Head => {
                let room = self.cap.saturating_sub(self.out.bytes.len());
                self.out
                    .bytes
                    .extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Keep::Tail => {
                self.out.bytes.extend_from_slice(chunk);
                // Cut only once twice the cap has piled up, so many small chunks do not each
                // move the whole kept tail.
                if self.out.bytes.len() > self.cap.saturating_mul(2) {
                    self.cut_tail();
                }
            }
        }
    }

    /// The kept bytes and the stream's total length.
    pub fn finish(mut self) -> Captured {
        self.cut_tail();
        self.out
    }

    fn cut_tail(&mut self) {
        let excess = self.out.bytes.len().saturating_sub(self.cap);
        self.out.bytes.drain(..excess);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(chunks: &[&[u8]], cap: usize, keep: Keep) -> Captured {
        let mut capture = Capture::new(cap, keep);
        for chunk in chunks {
            capture.push(chunk);
        }
        capture.finish()
    }

    #[test]
    fn head_keeps_the_start_and_counts_everything() {
        let c = captured(&[b"abc", b"defgh"], 4, Keep::Head);
        assert_eq!(
            (c.bytes.as_slice(), c.total, c.truncated()),
            (&b"abcd"[..], 8, true)
        );
    }

    #[test]
    fn tail_keeps_the_end() {
        let c = captured(&[b"line1\nline2\n", b"line3\n"], 12, Keep::Tail);
        assert_eq!(c.text(), "line2\nline3\n");
        assert_eq!(c.tail_lines(1), "line3");
    }

    #[test]
    fn tail_of_many_small_chunks_is_the_last_cap_bytes() {
        let chunks: Vec<Vec<u8>> = (0..1000u32).map(|i| i.to_be_bytes().to_vec()).collect();
        let chunks: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        let c = captured(&chunks, 10, Keep::Tail);
        assert_eq!(c.total, 4000);
        assert_eq!(c.bytes, chunks.concat()[3990..]);
    }
}
