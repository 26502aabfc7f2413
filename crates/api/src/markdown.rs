//! The one place text that someone else wrote (a commenter, a PR's benchmarks, a profile's
//! symbols) is made safe in the Markdown benchgate posts: as inline code ([`code`]), as a table
//! cell ([`cell`]) or as inline code in a table cell ([`code_cell`]). Every reply, comment and
//! check-run text quotes through these.

/// The most characters of someone's text a code span shows; longer text ends in `…`.
pub const CODE_CHARS: usize = 80;

/// `text` as one inline code span that nothing in it can end early (CommonMark 6.1): the fence
/// is a backtick run longer than any run inside, and a space pads both sides when the text
/// starts or ends with a backtick (or with spaces at both ends, which CommonMark would strip).
/// Line breaks become spaces and the text is cut at [`CODE_CHARS`]. Inside a code span nothing
/// is Markdown: no link, no emphasis, no `@mention`.
pub fn code(text: &str) -> String {
    let folded = text.replace("\r\n", " ").replace(['\n', '\r'], " ");
    let clean = match folded.char_indices().nth(CODE_CHARS) {
        Some((cut, _)) => {
            let kept: String = folded[..cut].chars().take(CODE_CHARS - 1).collect();
            format!("{kept}…")
        }
        None => folded,
    };
    if clean.is_empty() {
        return "` `".to_owned();
    }
    let longest = clean.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let all_spaces = clean.chars().all(|c| c == ' ');
    let pad = clean.starts_with('`')
        || clean.ends_with('`')
        || (clean.starts_with(' ') && clean.ends_with(' ') && !all_spaces);
    if pad {
        format!("{fence} {clean} {fence}")
    } else {
        format!("{fence}{clean}{fence}")
    }
}

/// Text made safe inside a table cell: no pipes, no HTML, no line breaks, no Markdown emphasis
/// or links, no `@mention`.
pub fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' => out.push('\''),
            // An entity shows `@` without the mention GitHub would notify.
            '@' => out.push_str("&#64;"),
            '*' | '_' | '[' | ']' | '\\' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// [`code`] inside a table cell. GitHub splits a row on every `|` not escaped by a backslash,
/// even inside a code span, and reads `\\` as an escaped backslash first; so each `|` gets a
/// backslash, and a backslash run just before it is made even (the code shows one backslash
/// more there, and the row stays whole).
pub fn code_cell(text: &str) -> String {
    let span = code(text);
    let mut out = String::with_capacity(span.len() + 8);
    for c in span.chars() {
        if c == '|' {
            let run = out.chars().rev().take_while(|&c| c == '\\').count();
            if run % 2 == 1 {
                out.push('\\');
            }
            out.push_str("\\|");
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
