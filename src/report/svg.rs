//! Inline SVG charts for the HTML report: plain strings, no scripts, no fonts to fetch. Every
//! chart carries `data-chart` (what it is) and a `<title>` per mark, so a reader hovering a dot
//! sees the case, and a test can find the chart.

use std::fmt::Write;

pub const CORRECT: &str = "#2e7d32";
pub const BROKEN: &str = "#c62828";
const AXIS: &str = "#555";
const GRID: &str = "#ddd";

/// Escapes text for XML content and attributes.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

fn open(kind: &str, label: &str, w: f64, h: f64) -> String {
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" data-chart="{kind}" role="img" aria-label="{}" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="system-ui, sans-serif" font-size="11">"#,
        esc(label)
    )
}

/// A y axis from 0 to 1 with gridlines at every 0.2, over `[top, top+height]` at `left`.
fn y_axis(s: &mut String, left: f64, top: f64, height: f64, right: f64, label: &str) {
    for i in 0..=5 {
        let v = i as f64 / 5.0;
        let y = top + height * (1.0 - v);
        let _ = write!(
            s,
            r#"<line x1="{left}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="{GRID}"/><text x="{:.1}" y="{:.1}" text-anchor="end">{v:.1}</text>"#,
            left - 4.0,
            y + 4.0
        );
    }
    let _ = write!(
        s,
        r#"<line x1="{left}" y1="{top}" x2="{left}" y2="{}" stroke="{AXIS}"/><text transform="translate(12 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        top + height,
        top + height / 2.0,
        esc(label)
    );
}

/// The dashed pass line across the plot, labelled in the margin right of it (inside the plot
/// the label sat on the cases' dots).
fn threshold_line(s: &mut String, left: f64, right: f64, y: f64, label: &str) {
    let _ = write!(
        s,
        r#"<line data-mark="threshold" x1="{left}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="{AXIS}" stroke-width="1.5" stroke-dasharray="5 3"/><text data-mark="threshold-label" x="{:.1}" y="{:.1}" text-anchor="start" fill="{AXIS}">{}</text>"#,
        right + 4.0,
        y + 4.0,
        esc(label)
    );
}

/// The margin [`threshold_line`]'s label needs right of the plot.
const THRESHOLD_LABEL: f64 = 76.0;
/// The width of a character of a 10px label, generously (system-ui varies).
const CHAR_W: f64 = 6.2;

/// A histogram of TC in ten bins over [0, 1] ([`super::bin`]), the counts of correct and
/// broken transcripts stacked, with the pass threshold marked.
pub fn histogram(label: &str, c: &[usize; 10], b: &[usize; 10], threshold: f64) -> String {
    let (w, h) = (380.0, 190.0);
    let (left, top, pw, ph) = (44.0, 12.0, 320.0, 140.0);
    let max = (0..10).map(|i| c[i] + b[i]).max().unwrap_or(0).max(1) as f64;
    let mut s = open("histogram", label, w, h);
    // Counts axis.
    let _ = write!(
        s,
        r#"<line x1="{left}" y1="{top}" x2="{left}" y2="{}" stroke="{AXIS}"/><text x="{:.1}" y="{:.1}" text-anchor="end">{max}</text><text x="{:.1}" y="{:.1}" text-anchor="end">0</text>"#,
        top + ph,
        left - 4.0,
        top + 8.0,
        left - 4.0,
        top + ph
    );
    let bw = pw / 10.0;
    for i in 0..10 {
        let x = left + bw * i as f64;
        let mut y = top + ph;
        for (n, color, what) in [(c[i], CORRECT, "correct"), (b[i], BROKEN, "broken")] {
            if n == 0 {
                continue;
            }
            let bh = ph * n as f64 / max;
            y -= bh;
            let _ = write!(
                s,
                r#"<rect data-mark="bar" x="{:.1}" y="{y:.1}" width="{:.1}" height="{bh:.1}" fill="{color}"><title>{n} {what}, TC {:.1}–{:.1}</title></rect>"#,
                x + 1.0,
                bw - 2.0,
                i as f64 / 10.0,
                (i + 1) as f64 / 10.0
            );
        }
        if i % 2 == 0 {
            let _ = write!(
                s,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{:.1}</text>"#,
                top + ph + 14.0,
                i as f64 / 10.0
            );
        }
    }
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">1.0</text><line x1="{left}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{AXIS}"/>"#,
        left + pw,
        top + ph + 14.0,
        top + ph,
        left + pw,
        top + ph
    );
    let tx = left + pw * threshold.clamp(0.0, 1.0);
    let _ = write!(
        s,
        r#"<line data-mark="threshold" x1="{tx:.1}" y1="{top}" x2="{tx:.1}" y2="{:.1}" stroke="{AXIS}" stroke-width="1.5" stroke-dasharray="5 3"/><text x="{tx:.1}" y="{:.1}" text-anchor="middle">TC (pass at {threshold:.2})</text>"#,
        top + ph,
        h - 6.0
    );
    s.push_str("</svg>");
    s
}

/// One case of the discrimination chart.
pub struct Case<'a> {
    pub name: &'a str,
    pub correct: bool,
    pub tc: f64,
    /// Whether the trial went as labelled.
    pub agrees: bool,
    /// The code of the error finding that failed it, when one did: a case drawn above the pass
    /// line that still failed says so with a cross.
    pub failed_by: Option<&'a str>,
}

/// Where the per-case chart puts things, for `n` cases.
const CASE_STEP: f64 = 26.0;
const CASE_LEFT: f64 = 44.0;
const CASE_TOP: f64 = 14.0;
const CASE_PH: f64 = 150.0;

/// The per-case discrimination chart up to its cases (each then [`discrimination_case`], and
/// `</svg>` after them): each labelled transcript's TC, correct ones then broken ones, with the
/// pass threshold and both means. Case names are written in full, slanted below the axis; the
/// chart grows to hold the longest (`longest` characters) of its `n` cases.
pub fn discrimination_head(
    label: &str,
    n: usize,
    longest: usize,
    threshold: f64,
    means: [Option<f64>; 2],
) -> String {
    let n = n.max(1) as f64;
    let (step, left, top, ph) = (CASE_STEP, CASE_LEFT, CASE_TOP, CASE_PH);
    let pw = (step * n).max(240.0);
    // A name slanted 60° down-right takes sin 60° of its length below the axis and cos 60°
    // (half) of it to the right of its dot.
    let longest = longest as f64 * CHAR_W;
    let last_x = left + step * (n - 0.5);
    let right = (last_x + longest * 0.5 + 8.0).max(left + pw + THRESHOLD_LABEL);
    let (w, h) = (right, top + ph + 24.0 + longest * 0.87);
    let mut s = open("discrimination", label, w, h);
    y_axis(&mut s, left, top, ph, left + pw, "TC");
    let y = |v: f64| top + ph * (1.0 - v.clamp(0.0, 1.0));
    threshold_line(
        &mut s,
        left,
        left + pw,
        y(threshold),
        &format!("pass at {threshold:.2}"),
    );
    for (mean, (group, color)) in means.into_iter().zip([(true, CORRECT), (false, BROKEN)]) {
        let Some(mean) = mean else {
            continue;
        };
        let _ = write!(
            s,
            r#"<line data-mark="mean" x1="{left}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-opacity="0.5"><title>mean TC of the {} cases: {mean:.3}</title></line>"#,
            y(mean),
            left + pw,
            y(mean),
            if group { "correct" } else { "broken" }
        );
    }
    s
}

/// The `i`-th case of the per-case chart: its dot, its cross when an error finding failed it
/// above the pass line, and its name.
pub fn discrimination_case(i: usize, c: &Case<'_>, threshold: f64) -> String {
    let (step, left, top, ph) = (CASE_STEP, CASE_LEFT, CASE_TOP, CASE_PH);
    let y = |v: f64| top + ph * (1.0 - v.clamp(0.0, 1.0));
    let mut s = String::new();
    let x = left + step * (i as f64 + 0.5);
    let color = if c.correct { CORRECT } else { BROKEN };
    let (fill, stroke) = if c.agrees {
        (color, color)
    } else {
        ("#fff", color)
    };
    let above = c.tc >= threshold;
    let why = match c.failed_by {
        Some(code) if above => {
            format!(" — failed by an error finding ({code}) although its TC is above the pass line")
        }
        Some(code) => format!(" — failed ({code})"),
        None => String::new(),
    };
    let _ = write!(
        s,
        r#"<circle data-mark="case" data-case="{0}" cx="{x:.1}" cy="{1:.1}" r="5" fill="{fill}" stroke="{stroke}" stroke-width="2"><title>{0} ({2}): TC {3:.3}{4}{5}</title></circle>"#,
        esc(c.name),
        y(c.tc),
        if c.correct { "correct" } else { "broken" },
        c.tc,
        esc(&why),
        if c.agrees { "" } else { " — decided wrong" },
    );
    if let (Some(code), true) = (c.failed_by, above) {
        let (cx, cy) = (x, y(c.tc));
        let _ = write!(
            s,
            r##"<path data-mark="error-cross" d="M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}" stroke="#000" stroke-width="1.6"><title>{}: failed by an error finding ({}) although its TC is above the pass line</title></path>"##,
            cx - 3.5,
            cy - 3.5,
            cx + 3.5,
            cy + 3.5,
            cx - 3.5,
            cy + 3.5,
            cx + 3.5,
            cy - 3.5,
            esc(c.name),
            esc(code)
        );
    }
    let _ = write!(
        s,
        r#"<text data-mark="case-label" transform="translate({:.1} {:.1}) rotate(60)" font-size="10">{}</text>"#,
        x - 3.0,
        top + ph + 10.0,
        esc(c.name)
    );
    s
}

/// The color of a 0–1 score: red through amber to green.
pub fn heat(v: f64) -> String {
    format!("hsl({:.0}, 65%, 52%)", 120.0 * v.clamp(0.0, 1.0))
}

/// The heat map: one row per suite, one column per sub-dimension, the mean score in each cell.
pub fn heat_map(label: &str, columns: &[&str], rows: &[(String, Vec<Option<f64>>)]) -> String {
    let cell = 38.0;
    let left = 8.0 + rows.iter().map(|(n, _)| n.len()).max().unwrap_or(4) as f64 * 7.0;
    let top = 132.0;
    // Room on the right for the last rotated column label.
    let w = left + cell * columns.len() as f64 + 110.0;
    let h = top + cell * rows.len() as f64 + 8.0;
    let mut s = open("heatmap", label, w, h);
    for (j, c) in columns.iter().enumerate() {
        let x = left + cell * j as f64 + cell / 2.0;
        let _ = write!(
            s,
            r#"<text transform="translate({:.1} {:.1}) rotate(-60)">{}</text>"#,
            x,
            top - 6.0,
            esc(c)
        );
    }
    for (i, (name, vals)) in rows.iter().enumerate() {
        let y = top + cell * i as f64;
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            left - 6.0,
            y + cell / 2.0 + 4.0,
            esc(name)
        );
        for (j, v) in vals.iter().enumerate() {
            let x = left + cell * j as f64;
            let (fill, text) = match v {
                Some(v) => (heat(*v), format!("{v:.2}")),
                None => ("#eee".to_owned(), "–".to_owned()),
            };
            let col = columns.get(j).copied().unwrap_or("");
            let _ = write!(
                s,
                r##"<rect data-mark="cell" x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}" stroke="#fff"><title>{}: {} = {text}</title></rect><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{text}</text>"##,
                cell,
                cell,
                esc(name),
                esc(col),
                x + cell / 2.0,
                y + cell / 2.0 + 4.0
            );
        }
    }
    s.push_str("</svg>");
    s
}

/// A scatter of two graders' TC over the same transcripts, with the diagonal of agreement.
pub fn scatter(label: &str, x_label: &str, y_label: &str, points: &[(String, f64, f64)]) -> String {
    let (left, top, side) = (44.0, 12.0, 240.0);
    let (w, h) = (left + side + 20.0, top + side + 40.0);
    let mut s = open("scatter", label, w, h);
    y_axis(&mut s, left, top, side, left + side, y_label);
    let px = |v: f64| left + side * v.clamp(0.0, 1.0);
    let py = |v: f64| top + side * (1.0 - v.clamp(0.0, 1.0));
    let _ = write!(
        s,
        r#"<line x1="{left}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{AXIS}"/><line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{AXIS}" stroke-dasharray="3 3"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        top + side,
        left + side,
        top + side,
        px(0.0),
        py(0.0),
        px(1.0),
        py(1.0),
        left + side / 2.0,
        top + side + 30.0,
        esc(x_label)
    );
    for i in 0..=5 {
        let v = i as f64 / 5.0;
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{v:.1}</text>"#,
            px(v),
            top + side + 14.0
        );
    }
    for (name, x, y) in points {
        let _ = write!(
            s,
            r##"<circle data-mark="point" cx="{:.1}" cy="{:.1}" r="4" fill="#1565c0" fill-opacity="0.7"><title>{}: {x:.3} vs {y:.3}</title></circle>"##,
            px(*x),
            py(*y),
            esc(name)
        );
    }
    s.push_str("</svg>");
    s
}
