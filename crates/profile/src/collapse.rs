//! `perf script` text to folded stacks with inferno's perf collapser, and telling whether a
//! profile has symbols at all.

use inferno::collapse::Collapse;
use inferno::collapse::perf::{Folder, Options};

use crate::error::ProfileError;
use crate::folded::Folded;

/// Turns `perf script` text into folded stacks with inferno's perf collapser (include addresses
/// for frames without a symbol, so a stripped binary still shows something).
///
/// Each stack's root frame is the process name; only the first event type in the text is
/// counted (inferno's rule: samples of two events do not add up). Every sample counts one,
/// whatever its period, so counts are shares of samples.
pub fn collapse_perf_script(script: &str) -> Result<Folded, ProfileError> {
    collapse_perf_script_from(script.as_bytes())
}

/// [`collapse_perf_script`] reading the text as it arrives (`perf script`'s pipe): memory
/// follows the distinct stacks, not the length of the script.
pub fn collapse_perf_script_from(script: impl std::io::BufRead) -> Result<Folded, ProfileError> {
    let mut options = Options::default();
    options.include_addrs = true;
    options.nthreads = 1;
    let mut out = Vec::new();
    Folder::from(options)
        .collapse(script, &mut out)
        .map_err(ProfileError::Collapse)?;
    let text = String::from_utf8(out).map_err(|e| {
        ProfileError::Collapse(std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    })?;
    Folded::parse(&text)
}

/// Percentage of samples at or above which unresolved leaves make a profile "without symbols".
pub const UNRESOLVED_PERCENT: f64 = 5.0;

/// Whether at least [`UNRESOLVED_PERCENT`] of the samples end in a frame without a symbol, so
/// the caller can say "no symbols". A few such samples in the loader or the kernel are normal
/// and say nothing about the benchmark's binary.
pub fn lacks_symbols(folded: &Folded) -> bool {
    unresolved_share(folded) >= UNRESOLVED_PERCENT
}

/// The percentage of samples whose running function (the leaf) has no symbol: near 100 for a
/// stripped binary, near 0 for one with symbols (the loader's start-up leaves a few `[unknown]`).
pub fn unresolved_share(folded: &Folded) -> f64 {
    let unresolved: u64 = folded
        .stacks()
        .filter(|(stack, _)| stack.rsplit(';').next().is_some_and(unresolved))
        .map(|(_, count)| count)
        .sum();
    match folded.total() {
        0 => 0.0,
        total => 100.0 * unresolved as f64 / total as f64,
    }
}

/// `[unknown]`, inferno's `[module <address>]` for an address without a symbol, or a bare
/// `0x…` address.
fn unresolved(frame: &str) -> bool {
    let bracketed_address = frame
        .strip_prefix('[')
        .and_then(|f| f.strip_suffix(">]"))
        .and_then(|inner| inner.rsplit_once(" <"))
        .is_some_and(|(_, address)| is_hex(address.strip_prefix("0x").unwrap_or(address)));
    frame == "[unknown]" || bracketed_address || frame.strip_prefix("0x").is_some_and(is_hex)
}

fn is_hex(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unresolved_frames_are_recognised_and_names_are_not() {
        for frame in [
            "[unknown]",
            "[prog <1187>]",
            "[unknown <7f00ab>]",
            "0x7f3a12",
        ] {
            assert!(unresolved(frame), "{frame}");
        }
        for frame in [
            "main",
            "add",
            "[deeper frames]",
            "[kernel.kallsyms]",
            "0xfeed_beef",
        ] {
            assert!(!unresolved(frame), "{frame}");
        }
    }

    #[test]
    fn a_few_unresolved_samples_in_the_loader_do_not_make_a_binary_stripped() {
        let few = Folded::parse("main;work 97\n_start;[unknown] 3\n").unwrap();
        assert!(!lacks_symbols(&few));
        let many = Folded::parse("main;work 90\nmain;[prog <1187>] 10\n").unwrap();
        assert!(lacks_symbols(&many));
        // Only the leaf counts: an unresolved caller does not hide where the time went.
        let caller = Folded::parse("[unknown];work 100\n").unwrap();
        assert!(!lacks_symbols(&caller));
        assert!(!lacks_symbols(&Folded::default()));
    }
}
