//! docs/cli.md against the binary: every command the top-level help lists has a section
//! `## simhashdb COMMAND` whose ```` ```text help ```` block is exactly what
//! `simhashdb COMMAND --help` prints, the top-level help sits the same way under
//! `## simhashdb`, and no section documents a command the binary does not have.
//!
//! `SIMHASHDB_GOLDEN_WRITE=1` rewrites the blocks in place from the binary instead of failing
//! (a section with no block gets one at its end); a missing or extra section still fails, since
//! its prose is written by hand.
#![cfg(feature = "serve")] // without `serve` the binary has one command fewer than the page

use std::path::{Path, PathBuf};

use crate::util::{simhashdb, text};

/// The info string of a help block.
const FENCE: &str = "```text help";
/// How to regenerate the blocks, said by every failure.
const REGENERATE: &str =
    "regenerate the blocks with `SIMHASHDB_GOLDEN_WRITE=1 cargo test --release --test main \
     cli_reference`, then read the prose around them";

fn page() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md")
}

/// What `simhashdb [COMMAND] --help` prints (`command` empty: the top-level help).
fn help(command: &str) -> String {
    let mut args = vec![];
    if !command.is_empty() {
        args.push(command);
    }
    args.push("--help");
    let out = simhashdb(&args, "");
    assert!(
        out.status.success(),
        "simhashdb {}: {}",
        args.join(" "),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The commands the top-level help lists, in its order. clap's own `help` is left out: it has
/// no `--help` of its own (`simhashdb help COMMAND` prints `simhashdb COMMAND --help`).
fn commands(top: &str) -> Vec<String> {
    top.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// A section of the page headed `## simhashdb` or `## simhashdb COMMAND`.
struct Section {
    /// The command it documents; empty for the top-level section.
    command: String,
    /// The line after its last line (the next `## ` heading, or the end of the page).
    end: usize,
    /// Its first help block: the index of the block's first line and of its closing fence.
    block: Option<(usize, usize)>,
}

/// Every `## simhashdb ...` section of the page, whose lines are `lines`.
fn sections(lines: &[&str]) -> Vec<Section> {
    let mut found: Vec<Section> = Vec::new();
    let mut open = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("## ") {
            if open {
                found.last_mut().unwrap().end = i;
            }
            let command = if line == "## simhashdb" {
                Some(String::new())
            } else {
                line.strip_prefix("## simhashdb ")
                    .map(|c| c.trim().to_string())
            };
            open = command.is_some();
            if let Some(command) = command {
                found.push(Section {
                    command,
                    end: lines.len(),
                    block: None,
                });
            }
        } else if open && line == FENCE && found.last().unwrap().block.is_none() {
            let close = (i + 1..lines.len())
                .find(|&j| lines[j] == "```")
                .unwrap_or_else(|| panic!("docs/cli.md:{}: a help block is never closed", i + 1));
            found.last_mut().unwrap().block = Some((i + 1, close));
            i = close;
        }
        i += 1;
    }
    found
}

/// The text of lines `from..to`, each ended by a newline (as the help prints them).
fn block_text(lines: &[&str], from: usize, to: usize) -> String {
    let mut out = String::new();
    for line in &lines[from..to] {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `simhashdb` or `simhashdb COMMAND`.
fn invocation(command: &str) -> String {
    if command.is_empty() {
        "simhashdb".to_string()
    } else {
        format!("simhashdb {command}")
    }
}

/// Where two texts first differ, by line, for the failure message.
fn first_difference(page: &str, binary: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (page.lines().collect(), binary.lines().collect());
    let Some(n) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) else {
        return "the same lines, with other line ends".to_string();
    };
    format!(
        "line {} of the help: the page has {:?}, the binary prints {:?}",
        n + 1,
        a.get(n).copied().unwrap_or("(nothing)"),
        b.get(n).copied().unwrap_or("(nothing)")
    )
}

#[test]
fn the_command_reference_is_the_binarys_help() {
    let write = std::env::var_os("SIMHASHDB_GOLDEN_WRITE").is_some();
    let top = help("");
    let commands = commands(&top);
    assert!(
        commands.iter().any(|c| c == "insert") && commands.iter().any(|c| c == "query"),
        "the top-level help lists no commands this test can read:\n{top}"
    );
    let mut helps: Vec<(String, String)> = vec![(String::new(), top)];
    helps.extend(commands.iter().map(|c| (c.clone(), help(c))));

    let original = std::fs::read_to_string(page()).expect("docs/cli.md is readable");
    let lines: Vec<&str> = original.split('\n').collect();
    let found = sections(&lines);

    let mut problems = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for section in &found {
        let name = invocation(&section.command);
        if !helps.iter().any(|(c, _)| *c == section.command) {
            problems.push(format!(
                "`## {name}` documents a command the binary does not have: remove the section"
            ));
        }
        if !seen.insert(section.command.as_str()) {
            problems.push(format!(
                "`## {name}` appears more than once: keep one section per command"
            ));
        }
    }
    // Each rewrite: the lines `from..to` of the page become these lines.
    let mut rewrites: Vec<(usize, usize, Vec<String>)> = Vec::new();
    for (command, printed) in &helps {
        let name = invocation(command);
        let Some(section) = found.iter().find(|s| s.command == *command) else {
            problems.push(format!(
                "`{name}` has no section in docs/cli.md: add `## {name}`, a few lines on what it \
                 does, and an empty {FENCE} block, then regenerate"
            ));
            continue;
        };
        let help_lines: Vec<String> = printed
            .strip_suffix('\n')
            .unwrap_or(printed)
            .split('\n')
            .map(str::to_string)
            .collect();
        match section.block {
            Some((from, to)) => {
                let documented = block_text(&lines, from, to);
                if documented != *printed {
                    if write {
                        rewrites.push((from, to, help_lines));
                    } else {
                        problems.push(format!(
                            "`{name} --help` drifted from its block under `## {name}`: {}",
                            first_difference(&documented, printed)
                        ));
                    }
                }
            }
            None if write => {
                // At the end of the section, after its last non-blank line.
                let mut at = section.end;
                while at > 0 && lines[at - 1].trim().is_empty() {
                    at -= 1;
                }
                let mut block = vec![String::new(), FENCE.to_string()];
                block.extend(help_lines);
                block.push("```".to_string());
                rewrites.push((at, at, block));
            }
            None => problems.push(format!(
                "`## {name}` has no {FENCE} block with `{name} --help` in it"
            )),
        }
    }

    if write && !rewrites.is_empty() {
        rewrites.sort_by_key(|r| std::cmp::Reverse(r.0));
        let mut new: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        for (from, to, replacement) in rewrites {
            let _replaced: Vec<String> = new.splice(from..to, replacement).collect();
        }
        std::fs::write(page(), new.join("\n")).expect("docs/cli.md is writable");
    }
    assert!(
        problems.is_empty(),
        "docs/cli.md is out of date with the binary:\n- {}\n{}",
        problems.join("\n- "),
        if problems
            .iter()
            .any(|p| p.contains("drifted") || p.contains("no ```"))
        {
            REGENERATE
        } else {
            "(the prose of a section is written by hand)"
        }
    );
}
