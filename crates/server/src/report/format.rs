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

/// Text shown as inline code: backticks cannot end the span early.
pub fn code(text: &str) -> String {
    let clean = text.replace(['\n', '\r'], " ");
    if clean.contains('`') {
        format!("`` {} ``", clean.replace("``", "` `"))
    } else {
        format!("`{clean}`")
    }
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
        assert_eq!(code("x`y"), "`` x`y ``");
    }
}
