//! Progress bars on stderr, drawn only when stderr is a terminal.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `total` steps labelled `what`; hidden when stderr is not a terminal.
pub fn bar(total: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} {elapsed_precise} eta {eta}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// A counter of bytes read (total unknown) labelled `what`; hidden when stderr is not a
/// terminal.
pub fn bytes(what: &str) -> ProgressBar {
    let bar = ProgressBar::no_length();
    bar.set_style(
        ProgressStyle::with_template("{msg} {spinner} {bytes} ({bytes_per_sec}) {elapsed_precise}")
            .expect("a valid template"),
    );
    bar.set_message(what.to_string());
    bar
}
