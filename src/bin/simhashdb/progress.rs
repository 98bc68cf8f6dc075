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
