//! Markdown safety for the comment: cells and code spans that text from the benchmarked
//! program or the repository cannot break. Words and numbers come from
//! `benchgate_stats::words`, shared with the CLI and the dashboard.

/// Text from the benchmarked program or the repository made safe inside a table cell: no
/// pipes, no HTML, no line breaks, no Markdown emphasis.
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

/// Text shown as inline code: the fence is one backtick longer than any run inside, so the
/// text cannot end the span early (CommonMark code spans); mentions are not processed in code.
pub fn code(text: &str) -> String {
    let clean = text.replace(['\n', '\r'], " ");
    let longest = clean.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    if longest == 0 {
        return format!("`{clean}`");
    }
    let fence = "`".repeat(longest + 1);
    // Spaces keep a leading or trailing backtick from joining the fence; CommonMark strips one.
    format!("{fence} {clean} {fence}")
}

/// Inline code inside a table cell: GitHub splits cells on `|` even inside code spans unless
/// it is escaped.
pub fn code_cell(text: &str) -> String {
    code(text).replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_break_the_table_or_inject_html() {
        assert_eq!(cell("a|b<script>"), "a\\|b&lt;script&gt;");
        assert_eq!(cell("thanks @octocat"), "thanks &#64;octocat");
        assert_eq!(code("x`y"), "`` x`y ``");
        assert_eq!(code("plain"), "`plain`");
    }

    /// The code span ends only at the closing fence: the text between, unchanged, is code.
    fn span_content(rendered: &str) -> Option<String> {
        let open = rendered.chars().take_while(|&c| c == '`').count();
        let fence = "`".repeat(open);
        let rest = &rendered[open..];
        // The first backtick run of exactly the fence's length closes the span.
        let bytes = rest.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'`' {
                let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
                if run == open {
                    return (i + run == rest.len()).then(|| rest[..i].to_owned());
                }
                i += run;
            } else {
                i += 1;
            }
        }
        let _ = fence;
        None
    }

    #[test]
    fn backtick_runs_in_names_cannot_close_the_span() {
        for name in [
            "x```<img src=x>",
            "`lead",
            "trail`",
            "a``b```c",
            "````",
            "x`y",
        ] {
            let rendered = code(name);
            let inside = span_content(&rendered)
                .unwrap_or_else(|| panic!("{name:?} closed its span early: {rendered}"));
            assert_eq!(inside.trim(), name, "{rendered}");
        }
    }
}
