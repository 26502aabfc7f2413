use super::*;

/// What CommonMark (6.1) reads in `rendered` when it starts with a code span: the span's text,
/// if the span ends exactly where `rendered` ends; `None` when something of `rendered` is left
/// outside the span (live Markdown) or the span never closes.
fn code_span_text(rendered: &str) -> Option<String> {
    let open = rendered.chars().take_while(|&c| c == '`').count();
    if open == 0 {
        return None;
    }
    let rest = &rendered[open..];
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
        if run == open {
            if i + run != rest.len() {
                return None;
            }
            let inner = rest[..i].replace('\n', " ");
            let strip =
                inner.starts_with(' ') && inner.ends_with(' ') && inner.chars().any(|c| c != ' ');
            return Some(if strip {
                inner[1..inner.len() - 1].to_owned()
            } else {
                inner
            });
        }
        i += run;
    }
    None
}

/// GitHub's table row split (cmark-gfm): a backslash and an ASCII punctuation character are one
/// escaped pair, any other `|` ends the cell; then `\|` is read as `|`.
fn gfm_cells(row: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek().is_some_and(|n| n.is_ascii_punctuation()) => {
                let next = chars.next().unwrap();
                if next != '|' {
                    cells.last_mut().unwrap().push('\\');
                }
                cells.last_mut().unwrap().push(next);
            }
            '|' => cells.push(String::new()),
            _ => cells.last_mut().unwrap().push(c),
        }
    }
    cells
}

/// Tricky text someone could write, and what the code span must show.
const TRICKY: &[(&str, &str)] = &[
    ("plain", "plain"),
    ("x`y", "x`y"),
    ("`lead", "`lead"),
    ("trail`", "trail`"),
    ("`both`", "`both`"),
    ("a``b```c", "a``b```c"),
    ("````", "````"),
    ("@evil", "@evil"),
    (
        "x` @evil [phish](http://phish.example) `",
        "x` @evil [phish](http://phish.example) `",
    ),
    ("[link](http://x)", "[link](http://x)"),
    (
        "<img src=x onerror=alert(1)>",
        "<img src=x onerror=alert(1)>",
    ),
    ("two\nlines\r\nthree", "two lines three"),
    ("a|b", "a|b"),
    (" spaced ", " spaced "),
    ("   ", "   "),
    ("", " "),
];

#[test]
fn code_spans_end_only_where_they_should_and_show_the_text() {
    for &(text, shown) in TRICKY {
        let rendered = code(text);
        assert_eq!(
            code_span_text(&rendered).as_deref(),
            Some(shown),
            "{text:?} rendered {rendered:?}"
        );
        assert!(!rendered.contains('\n'), "{rendered:?}");
    }
    assert_eq!(code("plain"), "`plain`");
    assert_eq!(code("x`y"), "``x`y``");
    assert_eq!(code("`lead"), "`` `lead ``");
}

#[test]
fn long_text_is_cut_with_an_ellipsis_and_stays_one_span() {
    let long = format!("{}`@evil`", "a".repeat(CODE_CHARS));
    let shown = code_span_text(&code(&long)).unwrap();
    assert_eq!(shown.chars().count(), CODE_CHARS);
    assert!(shown.ends_with('…') && !shown.contains("evil"), "{shown}");
    let exact = "é".repeat(CODE_CHARS);
    assert_eq!(code_span_text(&code(&exact)).unwrap(), exact);
}

#[test]
fn code_in_a_cell_is_one_cell_holding_one_span() {
    for &(text, shown) in TRICKY {
        let rendered = code_cell(text);
        let row = format!("| {rendered} | next |");
        let cells = gfm_cells(&row);
        assert_eq!(cells.len(), 4, "{text:?} split its row: {row}");
        assert_eq!(
            code_span_text(cells[1].trim()).as_deref(),
            Some(shown),
            "{text:?} rendered {rendered:?}"
        );
    }
    // A backslash before a pipe cannot pair with the pipe's escape; the code shows one more.
    let cells = gfm_cells(&format!("| {} | next |", code_cell(r"a\|b")));
    assert_eq!(cells.len(), 4, "{cells:?}");
    assert_eq!(code_span_text(cells[1].trim()).unwrap(), r"a\\|b");
}

#[test]
fn cells_cannot_break_the_table_or_inject_html_or_mentions() {
    assert_eq!(cell("a|b<script>"), "a\\|b&lt;script&gt;");
    assert_eq!(cell("thanks @octocat"), "thanks &#64;octocat");
    assert_eq!(cell("[x](http://phish)"), "\\[x\\](http://phish)");
    assert_eq!(cell("two\nlines"), "two lines");
    assert_eq!(gfm_cells(&format!("|{}|", cell(r"a\|b|c"))).len(), 3);
}
