//! Reading a child's output to the end while keeping at most a fixed number of bytes, so a
//! chatty benchmark can neither block on a full pipe nor exhaust the runner's memory.

use std::io::Read;

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

/// Reads `reader` to its end, keeping at most `cap` bytes from the chosen end.
pub fn read_capped(mut reader: impl Read, cap: usize, keep: Keep) -> std::io::Result<Captured> {
    let mut out = Captured::default();
    let mut buf = [0u8; 8192];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        out.total += n as u64;
        match keep {
            Keep::Head => {
                let room = cap.saturating_sub(out.bytes.len());
                out.bytes.extend_from_slice(&buf[..n.min(room)]);
            }
            Keep::Tail => {
                out.bytes.extend_from_slice(&buf[..n]);
                if out.bytes.len() > cap {
                    let excess = out.bytes.len() - cap;
                    out.bytes.drain(..excess);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_keeps_the_start_and_counts_everything() {
        let c = read_capped(&b"abcdefgh"[..], 3, Keep::Head).unwrap();
        assert_eq!(
            (c.bytes.as_slice(), c.total, c.truncated()),
            (&b"abc"[..], 8, true)
        );
    }

    #[test]
    fn tail_keeps_the_end() {
        let c = read_capped(&b"line1\nline2\nline3\n"[..], 12, Keep::Tail).unwrap();
        assert_eq!(c.text(), "line2\nline3\n");
        assert_eq!(c.tail_lines(1), "line3");
    }
}
