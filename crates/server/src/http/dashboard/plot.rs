//! SVG plots drawn on the server with plotters, inlined into pages (no JavaScript, no assets).
//!
//! Text is emitted as SVG `<text>` (plotters' built-in layout estimate, no font files), and
//! the black of axes and labels is rewritten to `currentColor` so a plot follows the page's
//! light or dark theme. Every label is escaped by plotters' SVG backend.

use plotters::prelude::*;

use super::rounds::{IntervalStep, Pair};

// About the width a plot gets on a desktop page, so text is drawn near 1:1; on a phone it
// scales down to ~70% and stays readable.
const WIDTH: u32 = 480;
const HEIGHT: u32 = 300;
/// Font size of tick labels, axis names and legends (plotters writes `size / 1.24` px).
const FONT: u32 = 16;
const BASE: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
const HEAD: RGBColor = RGBColor(0xe6, 0x6a, 0x00);
const OUTLIER: RGBColor = RGBColor(0xd6, 0x27, 0x28);
/// Series colours that read on white and on near-black alike.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xe6, 0x6a, 0x00),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

type PlotResult = Result<(), Box<dyn std::error::Error>>;

/// Runs `draw` on a fresh SVG canvas and returns the themed SVG; a drawing error becomes a
/// short note instead of a broken page.
fn svg(
    title: &str,
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> PlotResult,
) -> String {
    let mut out = String::new();
    let drawn = {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root).and_then(|()| root.present().map_err(Into::into))
    };
    if let Err(e) = drawn {
        tracing::warn!(error = %e, plot = title, "plot could not be drawn");
        return String::new();
    }
    themed(&out, title)
}

/// Makes the SVG scale with its container, names it for screen readers, and lets black follow
/// the text colour of the page.
fn themed(svg: &str, title: &str) -> String {
    let title = title
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('"', "&quot;");
    svg.replacen(
        "<svg ",
        &format!("<svg class=\"plot\" role=\"img\" aria-label=\"{title}\" "),
        1,
    )
    .replace("\"#000000\"", "\"currentColor\"")
}

/// Lower and upper bounds of `values` with a little headroom; a flat series gets a visible band.
fn padded_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.08)
        .max(hi.abs().max(lo.abs()) * 0.01)
        .max(1e-9);
    (lo - pad, hi + pad)
}

/// The divisor and unit name that keep `largest` (in `unit`) between 1 and 1000, so axis
/// labels read "1.05 ms" rather than "1050000.0".
fn display_unit(unit: &str, largest: f64) -> (f64, String) {
    let steps: &[(f64, &str)] = match unit {
        "ns" => &[(1.0, "ns"), (1e3, "µs"), (1e6, "ms"), (1e9, "s")],
        "bytes" => &[
            (1.0, "B"),
            (1024.0, "KiB"),
            (1048576.0, "MiB"),
            (1073741824.0, "GiB"),
        ],
        other => return (1.0, other.to_string()),
    };
    let (div, name) = steps
        .iter()
        .rev()
        .find(|(div, _)| largest >= *div)
        .copied()
        .unwrap_or(steps[0]);
    (div, name.to_string())
}

/// One line of the floor plot: a floor's spread per pair in percent, `(seconds ago, %)` with
/// x ≤ 0 (now is 0), oldest first.
pub struct FloorLine {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// The unit of a "time ago" axis spanning `span_secs`: days for a long history, hours or
/// minutes for a short one, so the ticks are whole, distinct numbers ("25 20 15 … 0 hours ago").
fn time_ago_unit(span_secs: f64) -> (f64, &'static str) {
    const UNITS: [(f64, &str); 3] = [
        (86_400.0, "days ago"),
        (3_600.0, "hours ago"),
        (60.0, "minutes ago"),
    ];
    UNITS
        .iter()
        .find(|(secs, _)| span_secs >= 3.0 * secs)
        .copied()
        .unwrap_or(UNITS[2])
}

/// A tick of a "time ago" axis whose coordinate is `x ≤ 0`: "12", "1.5", and "0" for now,
/// never "-0".
fn ago_label(x: f64) -> String {
    let ago = -x;
    // Under half a tenth rounds to "0"; `max(0.0)` would keep the sign of -0.0.
    if ago < 0.05 {
        return "0".to_owned();
    }
    let text = format!("{ago:.1}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The runner page's plot: each floor's spread per pair (%) over time, x in days, hours or
/// minutes before now (whichever the history's span reads best in).
pub fn floor_history(lines: &[FloorLine]) -> String {
    let (y0, y1) = padded_range(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)));
    let oldest = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(0.0, f64::min);
    let (unit_secs, x_desc) = time_ago_unit(-oldest);
    let lines: Vec<FloorLine> = lines
        .iter()
        .map(|l| FloorLine {
            label: l.label.clone(),
            points: l.points.iter().map(|&(x, y)| (x / unit_secs, y)).collect(),
        })
        .collect();
    let (x0, _) = padded_range(lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)));
    svg("A/A spread per pair over time", |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(52)
            .build_cartesian_2d(x0.min(-1.0)..0.0, y0.min(0.0)..y1)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("spread per pair, %")
            .x_label_formatter(&|x| ago_label(*x))
            .light_line_style(BLACK.mix(0.06))
            .bold_line_style(BLACK.mix(0.12))
            .label_style(("sans-serif", FONT))
            .axis_desc_style(("sans-serif", FONT))
            .x_labels(6)
            .y_labels(6)
            .draw()?;
        for (i, line) in lines.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(
                    line.points.iter().copied(),
                    colour.stroke_width(2),
                ))?
                .label(line.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 16, y)], colour.stroke_width(2))
                });
            chart.draw_series(
                line.points
                    .iter()
                    .map(|&p| Circle::new(p, 3, colour.filled())),
            )?;
        }
        if lines.len() > 1 {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.0))
                .label_font(("sans-serif", FONT))
                .border_style(BLACK.mix(0.3))
                .draw()?;
        }
        Ok(())
    })
}

/// Base and head values round by round, with flagged outlier rounds ringed: drift shows as a
/// slope shared by both lines, an outlier as a ring.
pub fn rounds(pairs: &[Pair], unit: &str, outliers: &[usize]) -> String {
    let largest = pairs
        .iter()
        .map(|p| p.base.abs().max(p.head.abs()))
        .fold(0.0, f64::max);
    let (scale, unit) = display_unit(unit, largest);
    let scaled: Vec<Pair> = pairs
        .iter()
        .map(|p| Pair {
            base: p.base / scale,
            head: p.head / scale,
            ..p.clone()
        })
        .collect();
    let pairs = &scaled[..];
    let (y0, y1) = padded_range(pairs.iter().flat_map(|p| [p.base, p.head]));
    let n = pairs.len().max(2) as f64;
    svg("base and head per round", |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(64)
            .build_cartesian_2d(0.5..n + 0.5, y0..y1)?;
        chart
            .configure_mesh()
            .x_desc("round")
            .y_desc(unit.as_str())
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| {
                format!("{y:.4}")
                    .trim_end_matches('0')
                    .trim_end_matches('.')
                    .to_string()
            })
            .light_line_style(BLACK.mix(0.06))
            .bold_line_style(BLACK.mix(0.12))
            .label_style(("sans-serif", FONT))
            .axis_desc_style(("sans-serif", FONT))
            .x_labels(6)
            .y_labels(6)
            .draw()?;
        for (side, colour, value) in [
            ("base", BASE, (|p: &Pair| p.base) as fn(&Pair) -> f64),
            ("head", HEAD, |p: &Pair| p.head),
        ] {
            let points: Vec<(f64, f64)> = pairs
                .iter()
                .enumerate()
                .map(|(i, p)| ((i + 1) as f64, value(p)))
                .collect();
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    colour.stroke_width(2),
                ))?
                .label(side)
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 16, y)], colour.stroke_width(2))
                });
            chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
        }
        chart.draw_series(
            outliers
                .iter()
                .filter_map(|&i| pairs.get(i).map(|p| (i, p)))
                .flat_map(|(i, p)| {
                    let x = (i + 1) as f64;
                    [
                        Circle::new((x, p.base), 7, OUTLIER.stroke_width(2)),
                        Circle::new((x, p.head), 7, OUTLIER.stroke_width(2)),
                    ]
                }),
        )?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.0))
            .label_font(("sans-serif", FONT))
            .border_style(BLACK.mix(0.3))
            .draw()?;
        Ok(())
    })
}

/// The anytime-valid interval after each round (shaded), its midpoint, zero, and ±`margin_pct`
/// when known: the band narrows as rounds are added and the verdict is where it stops
/// straddling a line.
pub fn interval_narrowing(steps: &[IntervalStep], margin_pct: Option<f64>) -> String {
    let bounded: Vec<&IntervalStep> = steps
        .iter()
        .filter(|s| s.lower_pct.is_some() && s.upper_pct.is_some())
        .collect();
    let (mut y0, mut y1) = padded_range(
        bounded
            .iter()
            .flat_map(|s| [s.lower_pct.unwrap_or(0.0), s.upper_pct.unwrap_or(0.0)])
            .chain(steps.iter().map(|s| s.change_pct))
            .chain([0.0])
            .chain(margin_pct.into_iter().flat_map(|m| [m, -m])),
    );
    // The first bounded intervals can be very wide; keep the later, decisive ones readable.
    let spread = steps.iter().map(|s| s.change_pct.abs()).fold(0.0, f64::max);
    let cap = (spread * 6.0).max(margin_pct.unwrap_or(0.0) * 3.0).max(2.0);
    y0 = y0.max(-cap);
    y1 = y1.min(cap);
    let n = steps.last().map_or(2, |s| s.rounds).max(2) as f64;
    svg("interval as rounds are added", |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(52)
            .build_cartesian_2d(0.5..n + 0.5, y0..y1)?;
        chart
            .configure_mesh()
            .x_desc("rounds")
            .y_desc("change, %")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .light_line_style(BLACK.mix(0.06))
            .bold_line_style(BLACK.mix(0.12))
            .label_style(("sans-serif", FONT))
            .axis_desc_style(("sans-serif", FONT))
            .x_labels(6)
            .y_labels(6)
            .draw()?;
        let clamp = |v: f64| v.clamp(y0, y1);
        chart.draw_series(bounded.iter().map(|s| {
            let x = s.rounds as f64;
            Rectangle::new(
                [
                    (x - 0.5, clamp(s.lower_pct.unwrap_or(y0))),
                    (x + 0.5, clamp(s.upper_pct.unwrap_or(y1))),
                ],
                BASE.mix(0.25).filled(),
            )
        }))?;
        chart.draw_series(LineSeries::new(
            [(0.5, 0.0), (n + 0.5, 0.0)],
            BLACK.mix(0.6),
        ))?;
        if let Some(m) = margin_pct {
            for level in [m, -m] {
                chart.draw_series(DashedLineSeries::new(
                    [(0.5, level), (n + 0.5, level)],
                    6,
                    4,
                    OUTLIER.mix(0.8).stroke_width(1),
                ))?;
            }
        }
        chart.draw_series(LineSeries::new(
            steps.iter().map(|s| (s.rounds as f64, clamp(s.change_pct))),
            HEAD.stroke_width(2),
        ))?;
        Ok(())
    })
}

/// One point of a branch's chain: the step number from the segment's anchor, the chain's
/// change in percent and its simultaneous band (unbounded sides are `None`).
pub struct ChainDot {
    pub step: f64,
    pub change_pct: f64,
    pub lower_pct: Option<f64>,
    pub upper_pct: Option<f64>,
}

/// The history page's plot: the branch against the segment's first commit, step by step, with
/// the band that holds for every step at once. An unbounded side is drawn at the plot's edge.
pub fn chain(dots: &[ChainDot], title: &str) -> String {
    let finite = dots
        .iter()
        .flat_map(|d| [Some(d.change_pct), d.lower_pct, d.upper_pct])
        .flatten()
        .chain([0.0]);
    let (y0, y1) = padded_range(finite);
    let last = dots.iter().map(|d| d.step).fold(1.0, f64::max);
    svg(title, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(52)
            .build_cartesian_2d(0.0..last + 0.5, y0..y1)?;
        chart
            .configure_mesh()
            .x_desc("steps from the anchor")
            .y_desc("change vs. anchor, %")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .light_line_style(BLACK.mix(0.06))
            .bold_line_style(BLACK.mix(0.12))
            .label_style(("sans-serif", FONT))
            .axis_desc_style(("sans-serif", FONT))
            .x_labels((last as usize + 1).min(12))
            .y_labels(6)
            .draw()?;
        let band: Vec<(f64, f64)> = dots
            .iter()
            .map(|d| (d.step, d.upper_pct.unwrap_or(y1).min(y1)))
            .chain(
                dots.iter()
                    .rev()
                    .map(|d| (d.step, d.lower_pct.unwrap_or(y0).max(y0))),
            )
            .collect();
        chart.draw_series(std::iter::once(Polygon::new(band, BASE.mix(0.18))))?;
        chart.draw_series(LineSeries::new(
            [(0.0, 0.0), (last + 0.5, 0.0)],
            BLACK.mix(0.4).stroke_width(1),
        ))?;
        chart.draw_series(LineSeries::new(
            std::iter::once((0.0, 0.0)).chain(dots.iter().map(|d| (d.step, d.change_pct))),
            BASE.stroke_width(2),
        ))?;
        chart.draw_series(
            dots.iter()
                .map(|d| Circle::new((d.step, d.change_pct), 3, BASE.filled())),
        )?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The centred labels of a drawn plot (x ticks and axis names), left to right.
    fn x_ticks(svg: &str) -> Vec<String> {
        svg.split("<text")
            .filter(|t| t.contains("text-anchor=\"middle\""))
            .filter_map(|t| t.split_once('>').map(|(_, rest)| rest))
            .filter_map(|t| {
                t.split_once("</text>")
                    .map(|(label, _)| label.trim().to_owned())
            })
            .collect()
    }

    #[test]
    fn a_short_floor_history_is_labelled_in_hours_without_minus_zero() {
        // Three sessions over the last day and a half: the range that read "1 1 1 0 0 -0 days ago".
        let line = FloorLine {
            label: "parse time".into(),
            points: vec![(-129_600.0, 1.2), (-50_000.0, 1.1), (-600.0, 1.0)],
        };
        let svg = floor_history(&[line]);
        assert!(svg.contains("hours ago"), "{svg}");
        let ticks = x_ticks(&svg);
        let numbers: Vec<&String> = ticks.iter().filter(|t| t.parse::<f64>().is_ok()).collect();
        assert!(numbers.len() >= 3, "{ticks:?}");
        assert!(!ticks.iter().any(|t| t == "-0"), "{ticks:?}");
        let mut unique = numbers.clone();
        unique.dedup();
        assert_eq!(
            unique, numbers,
            "every tick names a different time: {ticks:?}"
        );
    }

    #[test]
    fn the_axis_unit_follows_the_span() {
        assert_eq!(time_ago_unit(30.0 * 86_400.0).1, "days ago");
        assert_eq!(time_ago_unit(36.0 * 3_600.0).1, "hours ago");
        assert_eq!(time_ago_unit(20.0 * 60.0).1, "minutes ago");
        assert_eq!(ago_label(-0.0), "0");
        assert_eq!(ago_label(0.0), "0");
        assert_eq!(ago_label(-1.5), "1.5");
        assert_eq!(ago_label(-25.0), "25");
    }
}
