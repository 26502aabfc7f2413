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

/// Reads `pipe` to its end into `capture` in chunks: memory stays at the capture's cap, whatever
/// the stream's length. Read errors end the stream (a child that dies closes its pipe).
pub fn drain(mut pipe: impl std::io::Read, mut capture: Capture) -> Captured {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => capture.push(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    capture.finish()
}

/// How much of each stream a build keeps: its last lines are what explains a failure.
pub const BUILD_TAIL: usize = 64 << 10;

/// `child`'s standard output and error read into tails of `cap` bytes each while `wait` waits
/// for it (and may watch it); the agent's memory stays flat whatever the child prints.
pub fn tails_while<T>(
    child: &mut std::process::Child,
    cap: usize,
    wait: impl FnOnce(&mut std::process::Child) -> std::io::Result<T>,
) -> std::io::Result<(T, Captured, Captured)> {
    let (out, err) = (child.stdout.take(), child.stderr.take());
    std::thread::scope(|scope| {
        let out = scope.spawn(move || out.map(|p| drain(p, Capture::new(cap, Keep::Tail))));
        let err = scope.spawn(move || err.map(|p| drain(p, Capture::new(cap, Keep::Tail))));
        let waited = wait(child)?;
        let joined = |h: std::thread::ScopedJoinHandle<'_, Option<Captured>>| {
            h.join().ok().flatten().unwrap_or_default()
        };
        Ok((waited, joined(out), joined(err)))
    })
}

/// The last `lines` lines of a failed child's output (standard output, then error), headed by
/// how much it printed in all when that was more than was kept.
pub fn failure_tail(stdout: &Captured, stderr: &Captured, lines: usize) -> String {
    let text = stdout.text() + &stderr.text();
    let all: Vec<&str> = text.lines().collect();
    let tail = all[all.len().saturating_sub(lines)..].join("\n");
    if stdout.truncated() || stderr.truncated() {
        let printed = crate::disk::bytes(stdout.total + stderr.total);
        format!("(it printed {printed}; the last {lines} lines)\n{tail}")
    } else {
        tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

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
    fn drain_reads_a_long_stream_into_the_cap_and_counts_it_all() {
        let stream = std::io::repeat(b'x').take(3 << 20);
        let c = drain(stream, Capture::new(1000, Keep::Tail));
        assert_eq!((c.bytes.len(), c.total), (1000, 3 << 20));
    }

    #[test]
    fn a_failure_tail_says_how_much_was_printed_when_it_was_cut() {
        let out = captured(&[b"compiling\n"], 100, Keep::Tail);
        let err = captured(&[&b"x".repeat(5000), b"\nerror: nope\n"], 100, Keep::Tail);
        assert_eq!(
            failure_tail(&out, &err, 1),
            "(it printed 4.9 KiB; the last 1 lines)\nerror: nope"
        );
        let short = captured(&[b"error: nope\n"], 100, Keep::Tail);
        assert_eq!(failure_tail(&out, &short, 40), "compiling\nerror: nope");
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
