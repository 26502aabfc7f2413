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

/// One line of the floor plot: a floor's spread per pair in percent, `(days ago, %)` oldest first.
pub struct FloorLine {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// The runner page's plot: each floor's spread per pair (%) over time, x in days before now.
pub fn floor_history(lines: &[FloorLine]) -> String {
    let (y0, y1) = padded_range(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)));
    let (x0, _) = padded_range(lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)));
    svg("A/A spread per pair over time", |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(52)
            .build_cartesian_2d(x0.min(-1.0)..0.0, y0.min(0.0)..y1)?;
        chart
            .configure_mesh()
            .x_desc("days ago")
            .y_desc("spread per pair, %")
            .x_label_formatter(&|x| format!("{:.0}", -x))
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
