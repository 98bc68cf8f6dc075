//! Pictures of results (feature `plot`): `tune`'s scores and the audit's report, drawn with
//! plotters as SVG or PNG, written whole or not at all.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::register_font as register_font_bytes;

use crate::error::{Error, Result};
use crate::io::output_file::OutputFile;

/// The font family every picture's text uses (registered from the system's fonts).
pub(crate) const FONT: &str = "sans-serif";

/// Tableau's ten colours: distinct, and readable by most colour-blind readers.
pub(crate) const COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// What drawing into a backend returns.
pub(crate) type Drawn<DB> =
    std::result::Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Something that draws itself on any backend (SVG or PNG).
pub(crate) trait Picture {
    fn draw<DB: DrawingBackend>(&self, area: DrawingArea<DB, Shift>) -> Drawn<DB>;
}

/// Draws `picture` into `path` (`size` pixels), as SVG or PNG by its extension; the file is
/// written whole or not at all (a temporary file beside it, renamed into place).
pub(crate) fn write(picture: &impl Picture, path: &Path, size: (u32, u32)) -> Result<()> {
    let svg = is_svg(path)?;
    register_font()?;
    let failed = |e: &dyn std::fmt::Display| {
        Error::input(format!("{}: cannot draw the plot: {e}", path.display()))
    };
    if svg {
        let mut text = String::new();
        let area = SVGBackend::with_string(&mut text, size).into_drawing_area();
        picture.draw(area).map_err(|e| failed(&e))?;
        let mut out = OutputFile::create(path)?;
        out.write_all_named(text.as_bytes())?;
        return out.finish();
    }
    // plotters writes a PNG to a path itself: a temporary one beside it, renamed into place.
    let temporary = temporary_path(path);
    let area = BitMapBackend::new(&temporary, size).into_drawing_area();
    let written = picture
        .draw(area.clone())
        .and_then(|()| area.present())
        .map_err(|e| failed(&e));
    let renamed =
        written.and_then(|()| std::fs::rename(&temporary, path).map_err(|e| Error::io(path, e)));
    if renamed.is_err() {
        // Nothing half-written is left behind.
        let _ = std::fs::remove_file(&temporary);
    }
    renamed
}

/// Checks that `path` names a picture [`write`] can draw (`.svg` or `.png`): callers check it
/// before the work whose result they will draw.
pub(crate) fn check_path(path: &Path) -> Result<()> {
    is_svg(path).map(|_| ())
}

/// Whether `path` names an SVG (true) or a PNG (false) file; an error for any other name.
fn is_svg(path: &Path) -> Result<bool> {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("svg") => Ok(true),
        Some("png") => Ok(false),
        _ => Err(Error::input(format!(
            "{}: the plot is SVG or PNG: name the file .svg or .png",
            path.display()
        ))),
    }
}

/// A name beside `path` with the same extension (the PNG encoder goes by it).
fn temporary_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(
        ".{}.{}.tmp.{}",
        name.unwrap_or_default(),
        std::process::id(),
        path.extension()
            .map(|e| e.to_string_lossy())
            .unwrap_or_default()
    ))
}

/// Text needs a TrueType font (plotters measures and, for PNG, draws the glyphs): the first
/// of the usual sans-serif fonts found, else any `.ttf` under the system's font directory.
fn register_font() -> Result<()> {
    // What went wrong, if registering failed (a message kept for every later plot).
    static FAILURE: OnceLock<Option<String>> = OnceLock::new();
    let failure = FAILURE.get_or_init(|| register_first_font().err().map(|e| e.to_string()));
    match failure {
        Some(why) => Err(Error::input(why.clone())),
        None => Ok(()),
    }
}

/// Registers the first font found, or says why none could be.
fn register_first_font() -> Result<()> {
    let known = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/TTF/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
        "/System/Library/Fonts/Supplemental/Arial.ttf",
        "/Library/Fonts/Arial.ttf",
    ];
    let found = known
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .or_else(|| any_ttf(Path::new("/usr/share/fonts"), 4));
    let path = found.ok_or_else(|| {
        Error::input(
            "no TrueType font found for the plot's text (looked in /usr/share/fonts): install \
             one, e.g. Debian's fonts-dejavu-core",
        )
    })?;
    let bytes =
        std::fs::read(&path).map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
    // The registry keeps fonts for the life of the process.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    register_font_bytes(FONT, FontStyle::Normal, bytes)
        .map_err(|_| Error::input(format!("{}: not a font plotters can read", path.display())))
}

fn any_ttf(dir: &Path, depth: u32) -> Option<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    entries
        .iter()
        .find(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("ttf")))
        .cloned()
        .or_else(|| {
            (depth > 0)
                .then(|| {
                    entries
                        .iter()
                        .filter(|p| p.is_dir())
                        .find_map(|d| any_ttf(d, depth - 1))
                })
                .flatten()
        })
}
