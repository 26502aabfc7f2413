//! The PR-comment command parser: `/rebench`, `/rebench N`, `/rebench aa`, `/benchgate help`,
//! `/benchgate accept REASON`, `/benchgate claim BENCHMARK CHANGE`. Pure: a comment body in, at
//! most one command out.
//!
//! A command counts only at the start of a line outside code (fenced or indented) and outside
//! quotes, so quoting someone's `/rebench` or documenting it in a code block never triggers a run.

use std::ops::RangeInclusive;

use benchgate_api::markdown::code;

/// The number of rounds `/rebench N` may ask for.
pub const REBENCH_ROUNDS: RangeInclusive<u32> = 1..=200;

/// What the valid commands are, for `/benchgate help` and error replies.
pub const USAGE: &str = "\
`/rebench` — run the same number of rounds again
`/rebench N` — run N more rounds (1–200)
`/rebench aa` — measure this runner's noise floor (A/A) first, then rebench
`/benchgate accept REASON` — accept this commit's regressions (needs write permission; a new push needs a new acceptance)
`/benchgate unaccept` — take the acceptance back
`/benchgate profile [BENCHMARK]` — profile both sides (a few extra runs under perf, never samples) and show where the time went
`/benchgate bisect` — in a regression issue benchgate opened: search its commits for the one that did it
`/benchgate claim BENCHMARK CHANGE` — state a claim to check, e.g. `/benchgate claim parse -20%` or `/benchgate claim parse 2x faster` (needs write permission; the author can also write it in the description)
`/benchgate help` — show this list";

/// A command found in a comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/rebench` or `/rebench N`: more rounds; `None` means as many as the last run.
    Rebench {
        /// Rounds asked for, within [`REBENCH_ROUNDS`].
        rounds: Option<u32>,
    },
    /// `/rebench aa`: a fresh A/A calibration on this runner first.
    RebenchAa,
    /// `/benchgate help`.
    Help,
    /// `/benchgate accept REASON`: a maintainer accepts a regression.
    Accept {
        /// Why, as written (trimmed, never empty, at most [`REASON_CHARS`] characters).
        reason: String,
    },
    /// `/benchgate unaccept`: take this head's acceptance back.
    Unaccept,
    /// `/benchgate profile [BENCHMARK]`: profiled runs of both sides, after the verdict.
    Profile {
        /// The row it is about; `None`: the failing rows (the run command is profiled whole).
        benchmark: Option<String>,
    },
    /// `/benchgate bisect`: in a regression issue, search its range for the commit that did it.
    Bisect,
    /// `/benchgate claim BENCHMARK CHANGE`: a claim to answer beside the description's.
    Claim {
        /// The command's line as written (trimmed): `benchgate_claims::explicit` reads it.
        line: String,
    },
}

/// The longest reason an acceptance keeps: a sentence, not an essay in a check-run title.
pub const REASON_CHARS: usize = 300;

/// A comment that tried to give a command but got it wrong; the text is the reply to post.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// Two or more commands in one comment.
    #[error(
        "one command per comment, please: found {} on line {first_line} and {} on line {line}",
        code(.first),
        code(.second)
    )]
    MoreThanOne {
        /// The first command's word.
        first: String,
        /// Its line (1-based).
        first_line: usize,
        /// The second command's word.
        second: String,
        /// Its line (1-based).
        line: usize,
    },
    /// `/rebench N` with N outside [`REBENCH_ROUNDS`].
    #[error(
        "line {line}: {}: the number of rounds must be between {min} and {max}",
        code(&format!("/rebench {}", .value))
    )]
    RoundsOutOfRange {
        /// The number as written.
        value: String,
        /// Smallest allowed.
        min: u32,
        /// Largest allowed.
        max: u32,
        /// Line (1-based).
        line: usize,
    },
    /// An argument the command does not take.
    #[error("line {line}: {} does not take {}; valid: {valid}", code(.command), code(.argument))]
    UnknownArgument {
        /// `/rebench` or `/benchgate`.
        command: &'static str,
        /// What was written.
        argument: String,
        /// The valid forms.
        valid: &'static str,
        /// Line (1-based).
        line: usize,
    },
    /// `/benchgate accept` without a reason.
    #[error(
        "line {line}: `/benchgate accept` needs a reason, e.g. `/benchgate accept expected: new feature`"
    )]
    MissingReason {
        /// Line (1-based).
        line: usize,
    },
    /// `/benchgate claim` that does not read as a benchmark and a change.
    #[error("line {line}: {why}")]
    BadClaim {
        /// What the claim lacks, with an example.
        why: String,
        /// Line (1-based).
        line: usize,
    },
    /// `/benchgate accept` with a reason longer than [`REASON_CHARS`].
    #[error("line {line}: the reason has {chars} characters; keep it to {max}")]
    ReasonTooLong {
        /// Characters given.
        chars: usize,
        /// [`REASON_CHARS`].
        max: usize,
        /// Line (1-based).
        line: usize,
    },
}

const REBENCH_VALID: &str = "`/rebench`, `/rebench N` (N from 1 to 200), `/rebench aa`";
const BENCHGATE_VALID: &str = "`/benchgate help`, `/benchgate accept REASON`, `/benchgate unaccept`, \
     `/benchgate profile [BENCHMARK]`, `/benchgate bisect`, `/benchgate claim BENCHMARK CHANGE`";

/// Finds the command in a comment body: `Ok(None)` when there is none.
pub fn parse_command(body: &str) -> Result<Option<Command>, CommandError> {
    let mut found: Option<(usize, String, Command)> = None;
    for (line_no, line) in command_lines(body) {
        let Some((word, rest)) = command_word(line) else {
            continue;
        };
        let command = parse_one(word, rest, line_no)?;
        if let Some((first_line, first, _)) = &found {
            return Err(CommandError::MoreThanOne {
                first: first.clone(),
                first_line: *first_line,
                second: word.to_ascii_lowercase(),
                line: line_no,
            });
        }
        found = Some((line_no, word.to_ascii_lowercase(), command));
    }
    Ok(found.map(|(_, _, command)| command))
}

/// `(line number, text)` of the lines that may hold a command: outside fenced and indented code
/// and outside quotes, with up to three leading spaces removed (Markdown's own rule).
fn command_lines(body: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut fence: Option<(char, usize)> = None;
    body.lines().enumerate().filter_map(move |(i, raw)| {
        let indent = raw.len() - raw.trim_start_matches(' ').len();
        let line = raw.trim_start_matches(' ');
        if let Some((ch, len)) = fence {
            // A closing fence: the same character, at least as long, nothing after it.
            let run = line.chars().take_while(|&c| c == ch).count();
            if indent < 4 && run >= len && line[run..].trim().is_empty() {
                fence = None;
            }
            return None;
        }
        if indent >= 4 || raw.starts_with('\t') {
            return None;
        }
        for ch in ['`', '~'] {
            let run = line.chars().take_while(|&c| c == ch).count();
            if run >= 3 {
                fence = Some((ch, run));
                return None;
            }
        }
        if line.starts_with('>') {
            return None;
        }
        Some((i + 1, line.trim_end()))
    })
}

/// Splits `/word rest` when `word` is one of ours; `None` for any other line.
fn command_word(line: &str) -> Option<(&str, &str)> {
    let (word, rest) = match line.find(char::is_whitespace) {
        Some(i) => (&line[..i], line[i..].trim()),
        None => (line, ""),
    };
    let lower = word.to_ascii_lowercase();
    (lower == "/rebench" || lower == "/benchgate").then_some((word, rest))
}

fn parse_one(word: &str, rest: &str, line: usize) -> Result<Command, CommandError> {
    let mut args = rest.split_whitespace();
    if word.eq_ignore_ascii_case("/rebench") {
        let unknown = |argument: &str| CommandError::UnknownArgument {
            command: "/rebench",
            argument: argument.to_owned(),
            valid: REBENCH_VALID,
            line,
        };
        let command = match args.next() {
            None => Command::Rebench { rounds: None },
            Some(a) if a.eq_ignore_ascii_case("aa") => Command::RebenchAa,
            Some(n) if is_integer(n) => Command::Rebench {
                rounds: Some(rounds(n, line)?),
            },
            Some(other) => return Err(unknown(other)),
        };
        return match args.next() {
            None => Ok(command),
            Some(_) => Err(unknown(rest)),
        };
    }
    let sub = args.next();
    match sub.map(str::to_ascii_lowercase).as_deref() {
        Some("help") if args.next().is_none() => Ok(Command::Help),
        Some("unaccept") if args.next().is_none() => Ok(Command::Unaccept),
        Some("bisect") if args.next().is_none() => Ok(Command::Bisect),
        Some("profile") => {
            let benchmark = args.next().map(str::to_owned);
            match args.next() {
                None => Ok(Command::Profile { benchmark }),
                Some(_) => Err(CommandError::UnknownArgument {
                    command: "/benchgate",
                    argument: rest.to_owned(),
                    valid: BENCHGATE_VALID,
                    line,
                }),
            }
        }
        Some("claim") => {
            let args = rest
                .split_once(char::is_whitespace)
                .map_or("", |(_, a)| a.trim());
            let text = format!("/benchgate claim {args}");
            match benchgate_claims::explicit(&text) {
                Ok(claims) if claims.len() == 1 => Ok(Command::Claim { line: text }),
                Ok(_) => Err(CommandError::BadClaim {
                    why: "`/benchgate claim` takes one benchmark and one change".into(),
                    line,
                }),
                Err(why) => Err(CommandError::BadClaim { why, line }),
            }
        }
        Some("accept") => {
            let reason = rest["accept".len()..].trim();
            if reason.is_empty() {
                Err(CommandError::MissingReason { line })
            } else if reason.chars().count() > REASON_CHARS {
                Err(CommandError::ReasonTooLong {
                    chars: reason.chars().count(),
                    max: REASON_CHARS,
                    line,
                })
            } else {
                Ok(Command::Accept {
                    reason: reason.to_owned(),
                })
            }
        }
        _ => Err(CommandError::UnknownArgument {
            command: "/benchgate",
            argument: rest.to_owned(),
            valid: BENCHGATE_VALID,
            line,
        }),
    }
}

fn is_integer(s: &str) -> bool {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

fn rounds(n: &str, line: usize) -> Result<u32, CommandError> {
    n.parse::<u32>()
        .ok()
        .filter(|r| REBENCH_ROUNDS.contains(r))
        .ok_or_else(|| CommandError::RoundsOutOfRange {
            value: n.to_owned(),
            min: *REBENCH_ROUNDS.start(),
            max: *REBENCH_ROUNDS.end(),
            line,
        })
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
