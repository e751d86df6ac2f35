//! The sweep's pictures, as PNG bytes: the N × N heatmap of pair results,
//! the histogram of all pair figures, and with `--baseline` the N × N
//! picture of each pair against its earlier figure. Pure functions of a
//! finished `SweepDoc` (and, for the change picture, its baseline): they
//! lay ranks out (`Layout`: on rails, rail after rail), draw with
//! `plotters` into memory and encode with `png`; they never write a file
//! (the binary decides where pictures go).
//!
//! Text is drawn with DejaVu Sans embedded in the binary (the `dejavu`
//! crate), so a picture looks the same on a node with no fonts installed.

use fabdiag_sweep_judge::analysis::Better;
use fabdiag_sweep_judge::baseline::Baseline;
use fabdiag_sweep_judge::doc::SweepDoc;
use fabdiag_sweep_judge::ReportError;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Colour of a pair that ran and failed.
pub const FAILED: RGBColor = RGBColor(220, 30, 30);
/// Colour of a pair that never ran (a rank missing or lost).
pub const UNTESTED: RGBColor = RGBColor(190, 190, 190);
/// Colour of a pair the schedule never paired (ranks on different rails).
pub const OTHER_RAIL: RGBColor = RGBColor(236, 236, 236);
/// The colour scale covers this fraction of the best figure up to the
/// best: everything at or below half the best is the darkest colour, so a
/// 25 % slow link stands out while a 2 % spread stays one colour.
pub const SCALE_FLOOR: f64 = 0.5;

/// The largest heatmap side in cells; above it ranks are grouped into
/// blocks and a block shows its worst pair, so one bad link is never
/// averaged away.
const MAX_CELLS: usize = 1000;

const FONT: &str = "sans-serif";

fn font_ready() -> Result<(), ReportError> {
    static ONCE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *ONCE.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(ReportError::Picture("the embedded font could not be loaded".into()))
    }
}

fn draw_err<E: std::fmt::Display>(e: E) -> ReportError {
    ReportError::Picture(e.to_string())
}

/// What one heatmap cell shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell {
    Diagonal,
    Value(f64),
    Failed,
    Untested,
    /// Not in the schedule: its ranks are on different rails.
    OtherRail,
}

impl Cell {
    /// Which of two cells a block shows: a failure first, then the worse
    /// figure, then a gap.
    fn worse(self, other: Cell, better: Better) -> Cell {
        use Cell::*;
        match (self, other) {
            (Failed, _) | (_, Failed) => Failed,
            (Value(x), Value(y)) => match better {
                Better::Higher => Value(x.min(y)),
                Better::Lower => Value(x.max(y)),
            },
            (Value(x), _) | (_, Value(x)) => Value(x),
            (Untested, _) | (_, Untested) => Untested,
            (OtherRail, _) | (_, OtherRail) => OtherRail,
            (Diagonal, Diagonal) => Diagonal,
        }
    }
}

/// Where ranks sit on a square picture: their order along both axes
/// (rank order; on rails, grouped by rail, so that each rail's pairs are
/// one block on the diagonal, not a lattice across the whole square), and
/// how many share a cell (`block` a side, so that a side has at most
/// `max_cells`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    n: usize,
    /// The rails the ranks are grouped by (1: rank order).
    rails: usize,
    pub block: usize,
}

impl Layout {
    pub fn of(doc: &SweepDoc, max_cells: usize) -> Layout {
        let n = doc.nodes.len();
        let rails = doc.schedule.rails;
        Layout {
            n,
            // (a sweep on rails has a multiple of them; a document that
            // says otherwise is drawn in rank order)
            rails: if rails > 1 && n.is_multiple_of(rails) { rails } else { 1 },
            block: n.div_ceil(max_cells.max(1)).max(1),
        }
    }

    /// Cells a side.
    pub fn side(&self) -> usize {
        self.n.div_ceil(self.block)
    }

    fn per_rail(&self) -> usize {
        self.n / self.rails
    }

    /// Rank `r`'s place along the axes: rail after rail, rank order in each.
    pub fn pos(&self, r: usize) -> usize {
        (r % self.rails) * self.per_rail() + r / self.rails
    }

    /// The rank at place `p` (`pos`'s inverse).
    pub fn rank(&self, p: usize) -> usize {
        match self.per_rail() {
            0 => p,
            per => (p % per) * self.rails + p / per,
        }
    }

    /// The cell rank `r` is in.
    pub fn cell(&self, r: usize) -> usize {
        self.pos(r) / self.block
    }

    /// The ranks of cell `i`.
    pub fn ranks_in(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        (i * self.block..((i + 1) * self.block).min(self.n)).map(|p| self.rank(p))
    }
}

/// The cells of the matrix, laid out by `Layout`. One pass over the pair
/// records (each pair has one in `doc.pairs`; re-tests are kept apart),
/// straight into its cell: a map of every pair first took 7.4 s at 4,000
/// ranks (examples/report_cost) and grew with the pairs (50 million at
/// 10,000).
pub fn cells(doc: &SweepDoc, max_cells: usize) -> (Vec<Vec<Cell>>, Layout) {
    let n = doc.nodes.len();
    let layout = Layout::of(doc, max_cells);
    let side = layout.side();
    let better = doc.metric.better;
    // None: no record of any pair in the block (yet)
    let mut grid: Vec<Vec<Option<Cell>>> = vec![vec![None; side]; side];
    for p in doc.pairs.iter().filter(|p| p.a != p.b && p.a < n && p.b < n) {
        let c = match (p.value, p.untested) {
            (Some(v), _) => Cell::Value(v),
            (None, true) => Cell::Untested,
            (None, false) => Cell::Failed,
        };
        put_pair(&mut grid, layout.cell(p.a), layout.cell(p.b), c, |x, y| {
            x.worse(y, better)
        });
    }
    // a block with no record: its pairs never ran, unless it is one
    // rank's own diagonal cell, or on rails no pair of it is on one rail
    let gap = gap_of(doc, layout);
    let grid = grid
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            row.into_iter()
                .enumerate()
                .map(|(j, c)| c.unwrap_or_else(|| gap(i, j)))
                .collect()
        })
        .collect();
    (grid, layout)
}

/// Puts a pair's `v` in its cell (`i`, `j`) and the mirror cell, keeping
/// the `worse` of it and what a cell already holds.
fn put_pair<T: Copy>(grid: &mut [Vec<Option<T>>], i: usize, j: usize, v: T, worse: impl Fn(T, T) -> T) {
    for (i, j) in [(i, j), (j, i)] {
        if let Some(c) = grid.get_mut(i).and_then(|row| row.get_mut(j)) {
            *c = Some(c.map_or(v, |old| worse(old, v)));
        }
    }
}

/// What a cell holding no figure is: one rank's own diagonal cell, ranks
/// the schedule never paired (on different rails), or else pairs that
/// were not tested.
fn gap_of(doc: &SweepDoc, layout: Layout) -> impl Fn(usize, usize) -> Cell {
    let sched = fabdiag_sweep_plan::Schedule::on_rails(doc.nodes.len(), doc.schedule.rails).ok();
    move |i: usize, j: usize| {
        if i == j && layout.ranks_in(i).nth(1).is_none() {
            Cell::Diagonal
        } else if !sched
            .as_ref()
            .is_some_and(|s| layout.ranks_in(i).any(|a| layout.ranks_in(j).any(|b| s.has_pair(a, b))))
        {
            Cell::OtherRail
        } else {
            Cell::Untested
        }
    }
}

/// A figure as a fraction of the best (1: the best pair; lower: worse),
/// for either direction of "better".
pub fn of_best(v: f64, best: f64, better: Better) -> f64 {
    if !(v > 0.0 && best > 0.0) {
        return 0.0;
    }
    match better {
        Better::Higher => v / best,
        Better::Lower => best / v,
    }
}

/// The colour of a figure on the scale.
pub fn colour(q: f64) -> RGBColor {
    let h = ((q - SCALE_FLOOR) / (1.0 - SCALE_FLOOR)).clamp(0.0, 1.0);
    ViridisRGB::get_color(h)
}

fn cell_colour(c: Cell, best: f64, better: Better) -> RGBColor {
    match c {
        Cell::Diagonal => WHITE,
        Cell::Value(v) => colour(of_best(v, best, better)),
        Cell::Failed => FAILED,
        Cell::Untested => UNTESTED,
        Cell::OtherRail => OTHER_RAIL,
    }
}

fn encode(buf: &[u8], w: u32, h: u32) -> Result<Vec<u8>, ReportError> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(draw_err)?;
    writer.write_image_data(buf).map_err(draw_err)?;
    writer.finish().map_err(draw_err)?;
    Ok(out)
}

fn label(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Every picture of a report, as the page embeds them.
#[derive(Clone, Debug, Default)]
pub struct Pictures {
    pub heatmap: Vec<u8>,
    pub histogram: Vec<u8>,
    /// With `--baseline`.
    pub change: Option<Vec<u8>>,
}

/// Draws every picture of `doc`: the change picture when `change` (the
/// cells of `change_cells`) is given.
pub fn draw(doc: &SweepDoc, change: Option<&ChangeCells>) -> Result<Pictures, ReportError> {
    Ok(Pictures {
        heatmap: heatmap_png(doc)?,
        histogram: histogram_png(doc)?,
        change: change.map(|c| change_png(doc, c)).transpose()?,
    })
}

/// The change picture's cells: each pair's figure as a fraction of its
/// baseline figure, laid out as the heatmap, a cell of several ranks
/// showing its worst pair (one regressed link is never averaged away);
/// none where no pair of the cell was measured in both sweeps.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangeCells {
    pub cells: Vec<Vec<Option<f64>>>,
    pub layout: Layout,
}

/// `doc` against `base`, for the change picture: one walk over the pairs
/// into at most `MAX_CELLS`² cells.
pub fn change_cells(doc: &SweepDoc, base: &Baseline) -> ChangeCells {
    change_cells_at(doc, base, MAX_CELLS)
}

fn change_cells_at(doc: &SweepDoc, base: &Baseline, max_cells: usize) -> ChangeCells {
    let layout = Layout::of(doc, max_cells);
    let side = layout.side();
    let mut cells = vec![vec![None; side]; side];
    let names = doc.nodes.iter().map(|s| (&s.node.host, &s.node.device, &s.node.gpu));
    let matched = fabdiag_sweep_judge::baseline::Matched::new(base, names, doc.metric.better);
    for (a, b, f) in matched.fractions(&doc.matrix) {
        put_pair(&mut cells, layout.cell(a), layout.cell(b), f, f64::min);
    }
    ChangeCells { cells, layout }
}

/// What a square rank-by-rank picture shows: the heatmap and the change
/// picture differ only in this.
struct Square<'a> {
    title: String,
    subtitle: String,
    layout: Layout,
    /// `layout.side()` × `layout.side()` colours.
    colours: Vec<Vec<RGBColor>>,
    /// Ranks marked in red beside both axes.
    marked: std::collections::HashSet<usize>,
    axis: String,
    /// The colour scale's labels at 1, 0.75 and `SCALE_FLOOR`.
    scale: [String; 3],
    keys: Vec<(RGBColor, &'a str)>,
}

fn square_png(s: Square<'_>) -> Result<Vec<u8>, ReportError> {
    font_ready()?;
    let layout = s.layout;
    let side = s.colours.len();
    let cell = (720 / side.max(1)).clamp(1, 28) as i32;
    let plot = cell * side as i32;
    let (left, top, right, bottom) = (70i32, 64i32, 160i32, 70i32);
    let w = (left + plot + right).max(560);
    let h = top + plot + bottom;
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w as u32, h as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let text = |size: f64, pos: Pos| (FONT, size).into_font().color(&BLACK).pos(pos);
        root.draw(&Text::new(
            s.title,
            (left, 10),
            text(18.0, Pos::new(HPos::Left, VPos::Top)),
        ))
        .map_err(draw_err)?;
        root.draw(&Text::new(
            s.subtitle,
            (left, 34),
            text(13.0, Pos::new(HPos::Left, VPos::Top)),
        ))
        .map_err(draw_err)?;
        for (i, row) in s.colours.iter().enumerate() {
            for (j, col) in row.iter().enumerate() {
                let (x, y) = (left + j as i32 * cell, top + i as i32 * cell);
                root.draw(&Rectangle::new([(x, y), (x + cell, y + cell)], col.filled()))
                    .map_err(draw_err)?;
            }
        }
        root.draw(&Rectangle::new(
            [(left - 1, top - 1), (left + plot, top + plot)],
            BLACK.stroke_width(1),
        ))
        .map_err(draw_err)?;
        // rank labels, as many as fit without overlapping
        let step = ((16 + cell - 1) / cell).max(1) as usize;
        let step = if side <= 8 { 1 } else { step.max(side.div_ceil(40)) };
        for i in (0..side).step_by(step) {
            // (the cell's first rank: on rails, the axes are in rail order)
            let rank = layout.rank(i * layout.block);
            let red = layout.ranks_in(i).any(|r| s.marked.contains(&r));
            let colour = if red { FAILED } else { BLACK };
            let mid = i as i32 * cell + cell / 2;
            let style = (FONT, 12.0).into_font().color(&colour);
            root.draw(&Text::new(
                rank.to_string(),
                (left - 6, top + mid),
                style.pos(Pos::new(HPos::Right, VPos::Center)),
            ))
            .map_err(draw_err)?;
            let style = (FONT, 12.0).into_font().color(&colour);
            root.draw(&Text::new(
                rank.to_string(),
                (left + mid, top + plot + 6),
                style.pos(Pos::new(HPos::Center, VPos::Top)),
            ))
            .map_err(draw_err)?;
        }
        // a marked node may fall between labels, or be one pixel wide: a
        // red mark beside both axes finds it
        for &r in &s.marked {
            let at = layout.cell(r) as i32 * cell;
            let len = cell.max(3);
            root.draw(&Rectangle::new(
                [(left - 4, top + at), (left - 1, top + at + len)],
                FAILED.filled(),
            ))
            .map_err(draw_err)?;
            root.draw(&Rectangle::new(
                [(left + at, top + plot + 1), (left + at + len, top + plot + 4)],
                FAILED.filled(),
            ))
            .map_err(draw_err)?;
        }
        root.draw(&Text::new(
            s.axis,
            (left + plot / 2, top + plot + 26),
            text(13.0, Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(draw_err)?;
        scale_and_keys(&root, (left + plot + 24, top), plot.clamp(120, 400), s.scale, s.keys)?;
        root.present().map_err(draw_err)?;
    }
    encode(&buf, w as u32, h as u32)
}

/// The colour scale, best at the top, `height` tall from `(x, top)` and
/// labelled at 1, 0.75 and `SCALE_FLOOR`; under it each key.
fn scale_and_keys(
    root: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    (bx, top): (i32, i32),
    bh: i32,
    scale: [String; 3],
    keys: Vec<(RGBColor, &str)>,
) -> Result<(), ReportError> {
    let text = |size: f64, pos: Pos| (FONT, size).into_font().color(&BLACK).pos(pos);
    for k in 0..bh {
        let q = 1.0 - (1.0 - SCALE_FLOOR) * k as f64 / (bh - 1).max(1) as f64;
        root.draw(&Rectangle::new(
            [(bx, top + k), (bx + 16, top + k + 1)],
            colour(q).filled(),
        ))
        .map_err(draw_err)?;
    }
    for (label, y) in scale.into_iter().zip([top, top + bh / 2, top + bh - 1]) {
        root.draw(&Text::new(
            label,
            (bx + 20, y),
            text(11.0, Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(draw_err)?;
    }
    let mut y = top + bh + 14;
    for (c, what) in keys {
        root.draw(&Rectangle::new([(bx, y), (bx + 16, y + 12)], c.filled()))
            .map_err(draw_err)?;
        // (the pale keys would vanish into the page without an edge)
        root.draw(&Rectangle::new([(bx, y), (bx + 16, y + 12)], UNTESTED.stroke_width(1)))
            .map_err(draw_err)?;
        root.draw(&Text::new(
            what,
            (bx + 20, y + 6),
            text(11.0, Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(draw_err)?;
        y += 18;
    }
    Ok(())
}

/// "each cell: a block of 4 x 4 ranks, showing its worst pair", or what a
/// cell of one pair says.
fn cells_note(layout: Layout, one_pair: String) -> String {
    let block = layout.block;
    if block > 1 {
        format!("each cell: a block of {block} x {block} ranks, showing its worst pair")
    } else {
        one_pair
    }
}

/// `keys`, and on rails the key of pairs of two rails.
fn with_rail_key(doc: &SweepDoc, mut keys: Vec<(RGBColor, &'static str)>) -> Vec<(RGBColor, &'static str)> {
    if doc.schedule.rails > 1 {
        keys.push((OTHER_RAIL, "other rail"));
    }
    keys
}

/// The axes' caption: "rank (slow nodes in red)", and on rails that the
/// ranks are grouped by rail.
fn axis_note(layout: Layout, marked: &str) -> String {
    if layout.rails > 1 {
        format!("rank, grouped by rail ({marked} in red)")
    } else {
        format!("rank ({marked} in red)")
    }
}

/// The heatmap: row and column are ranks, a cell's colour is its pair's
/// figure against the best pair; failed pairs red, untested grey; slow
/// nodes' rank labels in red.
pub fn heatmap_png(doc: &SweepDoc) -> Result<Vec<u8>, ReportError> {
    let n = doc.nodes.len();
    let (grid, layout) = cells(doc, MAX_CELLS);
    let better = doc.metric.better;
    let best = doc.analysis.stats.best;
    let scale = [1.0, 0.75, SCALE_FLOOR].map(|q| {
        let v = match better {
            Better::Higher => best * q,
            Better::Lower => best / q,
        };
        if best > 0.0 {
            format!("{} ({:.0}%)", label(v), q * 100.0)
        } else {
            format!("{:.0}%", q * 100.0)
        }
    });
    let keys = with_rail_key(doc, vec![(FAILED, "failed"), (UNTESTED, "not tested")]);
    square_png(Square {
        title: format!("fabdiag sweep: {} ({}), {n} ranks", doc.metric.test, doc.metric.unit),
        subtitle: cells_note(
            layout,
            format!(
                "row: rank, column: rank; {} pairs{}",
                doc.schedule.total_pairs,
                crate::phrases::rails_note(doc.schedule.rails)
            ),
        ),
        layout,
        colours: grid
            .iter()
            .map(|row| row.iter().map(|c| cell_colour(*c, best, better)).collect())
            .collect(),
        marked: doc.analysis.slow_nodes.iter().map(|f| f.node).collect(),
        axis: axis_note(layout, "slow nodes"),
        scale,
        keys,
    })
}

/// The change picture (`--baseline`): row and column are ranks, a cell's
/// colour is its pair's figure as a fraction of its figure in the
/// baseline, on the heatmap's scale (as before or better at the top, half
/// or worse the darkest); pairs not measured in both sweeps grey; nodes
/// below their baseline in red. Where the heatmap shows how a pair
/// compares with the others, this shows how it compares with itself: a
/// block of darker cells is a part of the fabric that got slower.
pub fn change_png(doc: &SweepDoc, change: &ChangeCells) -> Result<Vec<u8>, ReportError> {
    let layout = change.layout;
    let gap = gap_of(doc, layout);
    // (a gap the sweep tested is grey here whether it failed, was not
    // tested, or its nodes are not in the baseline: not in both sweeps)
    let colours = change
        .cells
        .iter()
        .enumerate()
        .map(|(i, row)| {
            row.iter()
                .enumerate()
                .map(|(j, c)| match c {
                    Some(f) => colour(*f),
                    None => match gap(i, j) {
                        Cell::Diagonal => WHITE,
                        Cell::OtherRail => OTHER_RAIL,
                        _ => UNTESTED,
                    },
                })
                .collect()
        })
        .collect();
    let keys = with_rail_key(doc, vec![(UNTESTED, "not in both sweeps")]);
    let started = doc.baseline.as_ref().map_or("", |c| c.started.as_str());
    square_png(Square {
        title: format!("fabdiag sweep: {}, against its baseline", doc.metric.test),
        subtitle: cells_note(
            layout,
            format!("each pair's result as a fraction of its result in the sweep of {started}"),
        ),
        layout,
        colours,
        marked: doc
            .baseline
            .iter()
            .flat_map(|c| c.nodes.iter().map(|x| x.rank))
            .collect(),
        axis: axis_note(layout, "nodes below their baseline"),
        scale: [
            "1.00 or better".into(),
            "0.75".into(),
            format!("{SCALE_FLOOR:.2} or worse"),
        ],
        keys,
    })
}

/// The histogram of every measured pair: outlier pairs stacked in red over
/// the rest, the median as a line.
pub fn histogram_png(doc: &SweepDoc) -> Result<Vec<u8>, ReportError> {
    font_ready()?;
    let (w, h) = (720u32, 360u32);
    let values: Vec<f64> = doc
        .pairs
        .iter()
        .filter(|p| p.round.is_some())
        .filter_map(|p| p.value)
        .collect();
    let flagged: std::collections::HashSet<(usize, usize)> = doc
        .analysis
        .slow_links
        .iter()
        .map(|f| (f.a, f.b))
        .chain(
            doc.pairs
                .iter()
                .filter(|p| p.value.is_some_and(|v| doc.analysis.is_outlier(v)))
                .map(|p| (p.a, p.b)),
        )
        .collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if values.is_empty() {
        (0.0, 1.0)
    } else if hi - lo < hi.abs() * 1e-6 {
        (lo * 0.95, hi * 1.05 + 1e-9)
    } else {
        let pad = (hi - lo) * 0.02;
        (lo - pad, hi + pad)
    };
    let bins = 30usize;
    let width = (hi - lo) / bins as f64;
    let mut normal = vec![0u32; bins];
    let mut slow = vec![0u32; bins];
    for p in doc.pairs.iter().filter(|p| p.round.is_some()) {
        let Some(v) = p.value else { continue };
        let i = (((v - lo) / width) as usize).min(bins - 1);
        if flagged.contains(&(p.a, p.b)) {
            slow[i] += 1;
        } else {
            normal[i] += 1;
        }
    }
    let top = normal.iter().zip(&slow).map(|(a, b)| a + b).max().unwrap_or(0).max(1);
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("pair results: {} ({} pairs)", doc.metric.test, values.len()),
                (FONT, 16.0),
            )
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(48)
            .build_cartesian_2d(lo..hi, 0u32..(top + top / 10 + 1))
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            // not max_light_lines(0): plotters 0.3.7 loops forever on it
            .light_line_style(WHITE)
            .x_labels(8)
            .y_labels(6)
            .x_label_formatter(&|v| label(*v))
            .x_desc(doc.metric.unit.as_str())
            .y_desc("pairs")
            .label_style((FONT, 12.0))
            .axis_desc_style((FONT, 13.0))
            .draw()
            .map_err(draw_err)?;
        let blue = RGBColor(54, 92, 141);
        for i in 0..bins {
            let x0 = lo + i as f64 * width;
            let x1 = x0 + width * 0.92;
            if normal[i] > 0 {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x0, 0), (x1, normal[i])],
                        blue.filled(),
                    )))
                    .map_err(draw_err)?;
            }
            if slow[i] > 0 {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x0, normal[i]), (x1, normal[i] + slow[i])],
                        FAILED.filled(),
                    )))
                    .map_err(draw_err)?;
            }
        }
        let med = doc.analysis.stats.median;
        if !values.is_empty() && med > lo && med < hi {
            chart
                .draw_series(LineSeries::new(
                    [(med, 0), (med, top + top / 10 + 1)],
                    BLACK.stroke_width(2),
                ))
                .map_err(draw_err)?
                .label(format!("median {}", label(med)))
                .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK.stroke_width(2)));
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .label_font((FONT, 12.0))
                .position(SeriesLabelPosition::UpperMiddle)
                .draw()
                .map_err(draw_err)?;
        }
        root.present().map_err(draw_err)?;
    }
    encode(&buf, w, h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabdiag_sweep_judge::fixtures::doc_with;

    fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let dec = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut r = dec.read_info().expect("png header");
        let mut buf = vec![0; r.output_buffer_size().expect("size")];
        let info = r.next_frame(&mut buf).expect("png frame");
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    fn has(buf: &[u8], c: RGBColor) -> bool {
        buf.chunks(3).any(|p| p == [c.0, c.1, c.2])
    }

    /// Whether a row of pixels `w` wide has 20 of colour `c` in a run: a
    /// cell's width of it (type is smoothed into every grey, so single
    /// pixels prove nothing).
    fn has_run(buf: &[u8], w: u32, c: RGBColor) -> bool {
        buf.chunks(3 * w as usize).any(|row| {
            row.chunks(3)
                .collect::<Vec<_>>()
                .windows(20)
                .any(|r| r.iter().all(|p| *p == [c.0, c.1, c.2]))
        })
    }

    #[test]
    fn heatmap_shows_each_state_in_its_colour() {
        // rank 3 failed with rank 1; rank 4 missing; the rest at 100 but
        // one pair at 60
        let doc = doc_with(5, &[((0, 1), 60.0)], &[(1, 3)], &[4]);
        let png = heatmap_png(&doc).expect("heatmap");
        let (w, h, buf) = decode(&png);
        assert!(w >= 560 && h > 5 * 28, "{w}x{h}");
        assert!(has(&buf, FAILED), "a failed pair is red");
        assert!(has(&buf, UNTESTED), "a missing rank's pairs are grey");
        assert!(has(&buf, colour(1.0)), "the best pairs");
        assert!(has(&buf, colour(0.6)), "the 60 % pair");
        // and the colour of the 60 % pair is not the best pairs' colour
        assert_ne!(colour(0.6), colour(1.0));
    }

    #[test]
    fn a_big_sweep_is_drawn_in_blocks_that_keep_the_worst_pair() {
        // the same grouping as 2,500 ranks in 1,000 cells, at a size a
        // debug-build test draws quickly
        let doc = doc_with(25, &[((7, 24), 10.0)], &[(2, 5)], &[]);
        let (grid, layout) = cells(&doc, 10);
        assert_eq!(layout.block, 3);
        assert_eq!(grid.len(), 9);
        assert_eq!(grid[7 / 3][24 / 3], Cell::Value(10.0));
        assert_eq!(grid[24 / 3][7 / 3], Cell::Value(10.0));
        assert_eq!(grid[0][1], Cell::Failed, "a failure outranks every figure");
        assert_eq!(
            grid[1][1],
            Cell::Value(100.0),
            "a block on the diagonal holds pairs too"
        );
        assert_eq!(grid[3][3], Cell::Value(100.0));
    }

    #[test]
    fn a_pair_without_a_record_is_not_tested_and_a_lone_rank_is_the_diagonal() {
        // 7 ranks in blocks of 2: the last block holds rank 6 alone
        let mut doc = doc_with(7, &[], &[], &[]);
        doc.pairs.retain(|p| (p.a, p.b) != (0, 1) && p.b != 6);
        let (grid, layout) = cells(&doc, 4);
        assert_eq!((layout.block, grid.len()), (2, 4));
        assert_eq!(grid[0][0], Cell::Untested, "the only pair of block 0 has no record");
        assert_eq!(grid[3][3], Cell::Diagonal);
        assert_eq!(grid[3][0], Cell::Untested, "rank 6 has no record with anyone");
        assert_eq!(grid[0][3], Cell::Untested);
        assert_eq!(grid[1][1], Cell::Value(100.0));
        assert_eq!(grid[1][0], Cell::Value(100.0));
    }

    #[test]
    fn on_rails_pairs_of_different_rails_have_their_own_colour() {
        // 6 ranks on 2 rails: only pairs of equal rank mod 2 were tested;
        // the axes hold rail 0 (ranks 0, 2, 4) then rail 1 (1, 3, 5)
        let mut doc = doc_with(6, &[], &[], &[]);
        doc.pairs.retain(|p| p.a % 2 == p.b % 2);
        doc.schedule.rails = 2;
        let (grid, layout) = cells(&doc, 100);
        assert_eq!((0..6).map(|r| layout.pos(r)).collect::<Vec<_>>(), [0, 3, 1, 4, 2, 5]);
        for (i, row) in grid.iter().enumerate() {
            for (j, c) in row.iter().enumerate() {
                let want = if i == j {
                    Cell::Diagonal
                } else if (i < 3) == (j < 3) {
                    Cell::Value(100.0)
                } else {
                    Cell::OtherRail
                };
                assert_eq!(*c, want, "{i},{j}: {grid:?}");
            }
        }
        // a pair of one rail with no record is still "not tested"
        doc.pairs.retain(|p| (p.a, p.b) != (1, 3));
        assert_eq!(cells(&doc, 100).0[4][3], Cell::Untested);
        // in blocks of 2 places (ranks 0 2 | 4 1 | 3 5), only the cells
        // with no pair of one rail are "other rail": ranks 4 and 1's own,
        // and 0 2 with 3 5
        let (grid, layout) = cells(&doc, 3);
        assert_eq!(layout.block, 2);
        assert_eq!(layout.ranks_in(1).collect::<Vec<_>>(), [4, 1]);
        for (i, row) in grid.iter().enumerate() {
            for (j, c) in row.iter().enumerate() {
                let other = matches!((i, j), (1, 1) | (0, 2) | (2, 0));
                assert_eq!(matches!(c, Cell::OtherRail), other, "{i},{j}: {grid:?}");
            }
        }
        let cell_of = |doc: &SweepDoc, c: RGBColor| {
            let (w, _, buf) = decode(&heatmap_png(doc).expect("heatmap"));
            has_run(&buf, w, c)
        };
        assert!(cell_of(&doc, OTHER_RAIL));
        doc.schedule.rails = 1;
        assert!(!cell_of(&doc, OTHER_RAIL), "every pair scheduled: no other-rail cell");
        assert!(cell_of(&doc, UNTESTED), "those cells are not tested then");
    }

    #[test]
    fn the_change_cells_hold_each_pair_against_itself_and_a_block_its_worst() {
        use fabdiag_sweep_judge::fixtures::{build_with, sweep_with};
        // host order shifted by one between the sweeps: the cells follow
        // the names; pair 2-5 at half its figure, host 7 new
        let on = |values: &[((usize, usize), f64)], host: &dyn Fn(usize) -> String| {
            let mut s = sweep_with(8, values, &[], &[]);
            for x in &mut s.nodes {
                x.host = Some(host(x.rank));
            }
            build_with(s, None)
        };
        let base = fabdiag_sweep_judge::fixtures::baseline_of(&on(&[], &|r| format!("node{}", (r + 1) % 8)));
        let mut now = on(&[((2, 5), 50.0)], &|r| {
            if r == 7 {
                "spare".into()
            } else {
                format!("node{r}")
            }
        });
        let c = change_cells_at(&now, &base, 8);
        assert_eq!(c.layout.block, 1);
        assert_eq!(c.cells[2][5], Some(0.5));
        assert_eq!(c.cells[5][2], Some(0.5));
        assert_eq!(c.cells[0][1], Some(1.0));
        assert_eq!(c.cells[3][3], None, "a rank's own cell");
        assert!(
            (0..8).all(|r| c.cells[7][r].is_none() && c.cells[r][7].is_none()),
            "{c:?}"
        );
        // in blocks of 3 ranks, a block shows its worst pair, and the
        // last block (ranks 6, 7) has none compared but 6's with others
        let c = change_cells_at(&now, &base, 3);
        assert_eq!((c.layout.block, c.cells.len()), (3, 3));
        assert_eq!(c.cells[0][1], Some(0.5));
        assert_eq!(c.cells[1][0], Some(0.5));
        assert_eq!(c.cells[1][1], Some(1.0));
        assert_eq!(c.cells[2][2], None);
        assert_eq!(c.cells[2][0], Some(1.0));
        // a latency that doubled is at half its baseline, as in compare
        now.metric.better = Better::Lower;
        assert_eq!(change_cells_at(&now, &base, 8).cells[2][5], Some(2.0));
    }

    #[test]
    fn the_change_picture_shows_each_pair_against_its_baseline() {
        // the baseline: every pair at 100; now rank 2's pairs at 40 and
        // rank 5 missing (its pairs not measured in both)
        let base = fabdiag_sweep_judge::fixtures::baseline_of(&doc_with(6, &[], &[], &[]));
        let slow: Vec<((usize, usize), f64)> = [0, 1, 3, 4].iter().map(|&r| ((r.min(2), r.max(2)), 40.0)).collect();
        let doc = fabdiag_sweep_judge::fixtures::build_with(
            fabdiag_sweep_judge::fixtures::sweep_with(6, &slow, &[], &[5]),
            Some((&base, 0.8)),
        );
        assert_eq!(
            doc.baseline
                .as_ref()
                .map(|c| c.nodes.iter().map(|x| x.rank).collect::<Vec<_>>()),
            Some(vec![2])
        );
        let change = change_cells(&doc, &base);
        assert_eq!(change.cells[2][0], Some(0.4));
        let (w, h, buf) = decode(&change_png(&doc, &change).expect("change picture"));
        assert!(w >= 560 && h > 6 * 28, "{w}x{h}");
        let run_of = |c: RGBColor| has_run(&buf, w, c);
        assert!(run_of(colour(0.4)), "rank 2's pairs in the darkest colour");
        assert!(run_of(colour(1.0)), "the rest as before");
        assert!(run_of(UNTESTED), "rank 5's pairs, not measured in both");
        assert!(has(&buf, FAILED), "rank 2 marked beside the axes");
        // and the page carries it in its baseline section
        let pictures = draw(&doc, Some(&change)).expect("pictures");
        let page = crate::html::page(&doc, &pictures);
        let section = &page[page.find("<h2>Against the baseline</h2>").expect("the section")..];
        assert!(section.contains("alt=\"each pair&#39;s result against its baseline\""));
        assert!(draw(&doc, None).expect("pictures").change.is_none());
        // on 2 rails, pairs of different rails were never paired: the
        // heatmap's pale "other rail", not "not in both sweeps"
        let mut s = fabdiag_sweep_judge::fixtures::sweep_with(6, &[], &[], &[]);
        s.pairs.retain(|p| p.a % 2 == p.b % 2);
        s.rails = 2;
        let doc = fabdiag_sweep_judge::fixtures::build_with(s, Some((&base, 0.8)));
        let change = change_cells(&doc, &base);
        // (rail 0's ranks 0, 2, 4 first: places 0 and 1 are ranks 0 and 2,
        // place 3 is rank 1)
        assert_eq!((change.cells[0][1], change.cells[0][3]), (Some(1.0), None));
        let (w, _, buf) = decode(&change_png(&doc, &change).expect("change picture"));
        let run_of = |c: RGBColor| has_run(&buf, w, c);
        assert!(run_of(OTHER_RAIL) && !run_of(UNTESTED));
    }

    #[test]
    fn on_rails_the_axes_hold_rail_after_rail_and_each_place_one_rank() {
        for (n, rails) in [(6, 2), (12, 3), (16, 8), (7, 1), (9, 2), (1, 1)] {
            let mut doc = doc_with(n, &[], &[], &[]);
            doc.schedule.rails = rails;
            let l = Layout::of(&doc, 1000);
            let mut places: Vec<usize> = (0..n).map(|r| l.pos(r)).collect();
            assert!((0..n).all(|r| l.rank(l.pos(r)) == r), "{n} on {rails}");
            places.sort_unstable();
            assert_eq!(places, (0..n).collect::<Vec<_>>(), "{n} on {rails}");
            // rail g's ranks take places g*(n/K) onwards, in rank order
            if n.is_multiple_of(rails) {
                for r in 0..n {
                    assert_eq!(l.pos(r), (r % rails) * (n / rails) + r / rails);
                }
            } else {
                assert!((0..n).all(|r| l.pos(r) == r), "rank order when K does not divide n");
            }
        }
    }

    #[test]
    fn latency_is_scaled_the_other_way() {
        assert!((of_best(2.0, 1.0, Better::Lower) - 0.5).abs() < 1e-12);
        assert!((of_best(50.0, 100.0, Better::Higher) - 0.5).abs() < 1e-12);
        assert_eq!(of_best(0.0, 100.0, Better::Higher), 0.0);
    }

    #[test]
    fn histogram_draws_outliers_in_red() {
        let doc = doc_with(6, &[((0, 1), 20.0)], &[], &[]);
        assert!(!doc.analysis.slow_links.is_empty(), "the test needs an outlier");
        let (_, _, buf) = decode(&histogram_png(&doc).expect("histogram"));
        assert!(has(&buf, FAILED));
        let empty = doc_with(2, &[], &[(0, 1)], &[]);
        histogram_png(&empty).expect("a histogram with no figure still draws");
    }
}
