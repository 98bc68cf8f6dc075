//! The layout of src/ as docs/design.md draws it: no cycle between modules, and every wing
//! depends only on the wings its row of the map names.
//!
//! Dependencies are read from the code as text: every `crate::` and `super::` path outside
//! comments (brace groups expanded; names re-exported by lib.rs resolved to their module).
//! A module's use of its own submodules is structure (it declares and re-exports them), not
//! a dependency; everything else is, test modules included.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path ("" is the crate root) -> its source with comments removed.
fn modules() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                if rel != "bin" {
                    stack.push(path);
                }
                continue;
            }
            let Some(rel) = rel.strip_suffix(".rs") else {
                continue;
            };
            let name = match rel {
                "lib" => String::new(),
                _ => rel.strip_suffix("/mod").unwrap_or(rel).replace('/', "::"),
            };
            out.insert(
                name,
                without_comments(&std::fs::read_to_string(&path).unwrap()),
            );
        }
    }
    out
}

/// `code` without its line comments (doc comments included: their links are not uses).
fn without_comments(code: &str) -> String {
    code.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path a `crate::` or `super::` occurrence in `code` names, brace groups expanded,
/// each as its segments starting with `crate` or `super`.
fn paths(code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start).map(|i| i + from) {
            from = i + start.len();
            if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
                continue;
            }
            expand(code, i, &mut Vec::new(), &mut out);
        }
    }
    out
}

/// Reads the path at `at` (after the segments in `prefix`) into `out`; returns where it ends.
fn expand(
    code: &str,
    mut at: usize,
    prefix: &mut Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let bytes = code.as_bytes();
    let depth = prefix.len();
    loop {
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        if at < bytes.len() && bytes[at] == b'{' {
            at += 1;
            loop {
                at = expand(code, at, prefix, out);
                while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b',') {
                    at += 1;
                }
                if at >= bytes.len() || bytes[at] == b'}' {
                    break;
                }
            }
            prefix.truncate(depth);
            return at + 1;
        }
        let end = at
            + code[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(code.len() - at);
        if end == at {
            break;
        }
        prefix.push(code[at..end].to_string());
        at = end;
        if code[at..].starts_with("::") {
            at += 2;
        } else {
            break;
        }
    }
    if prefix.len() > depth {
        out.push(prefix.clone());
    }
    prefix.truncate(depth);
    at
}

/// Module -> the names it re-exports (`pub use`, `pub(crate) use`) -> the module each comes
/// from.
type Reexports = BTreeMap<String, BTreeMap<String, String>>;

/// The module `path` (relative to module `from`) lands in: its longest prefix that is a
/// module, followed through that module's re-exports of the next name.
fn resolve(
    from: &str,
    path: &[String],
    modules: &BTreeMap<String, String>,
    reexports: &Reexports,
) -> Option<String> {
    let mut base: Vec<&str> = if from.is_empty() {
        vec![]
    } else {
        from.split("::").collect()
    };
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &path[1..];
        }
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        // A path relative to `from`, as in `pub use child::Item`.
        Some(_) => {}
        None => return None,
    }
    let mut current: Vec<&str> = base.clone();
    let mut best = base.join("::");
    let mut used = 0;
    for segment in rest {
        current.push(segment);
        let name = current.join("::");
        if !modules.contains_key(&name) {
            break;
        }
        best = name;
        used += 1;
    }
    // Follow re-exports: `crate::run::RunReader` is `run::read`'s.
    let mut hops = 0;
    while let Some(next) = rest.get(used) {
        let Some(target) = reexports.get(&best).and_then(|names| names.get(next)) else {
            break;
        };
        if *target == best || hops == 4 {
            break;
        }
        best = target.clone();
        hops += 1;
        used += 1;
        // A re-exported module (`pub use sys::background`) goes on into it.
        if !modules.contains_key(&best) {
            break;
        }
    }
    Some(best)
}

/// Every module's re-exports, resolved.
fn reexports(modules: &BTreeMap<String, String>) -> Reexports {
    let mut out = Reexports::new();
    // Twice, so a re-export of a re-export resolves.
    for _ in 0..2 {
        let mut next = Reexports::new();
        for (module, code) in modules {
            for keyword in ["pub use ", "pub(crate) use "] {
                let mut from = 0;
                while let Some(i) = code[from..].find(keyword).map(|i| i + from) {
                    from = i + keyword.len();
                    let mut found = Vec::new();
                    expand(code, from, &mut Vec::new(), &mut found);
                    for path in found {
                        if path.len() < 2 {
                            continue;
                        }
                        let parent = &path[..path.len() - 1];
                        if let Some(target) = resolve(module, parent, modules, &out) {
                            let target = match modules
                                .contains_key(&format!("{target}::{}", path.last().unwrap()))
                            {
                                true => format!("{target}::{}", path.last().unwrap()),
                                false => target,
                            };
                            next.entry(module.clone())
                                .or_default()
                                .insert(path.last().unwrap().clone(), target);
                        }
                    }
                }
            }
        }
        out = next;
    }
    out
}

/// Module -> the modules it depends on.
fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules();
    let reexports = reexports(&modules);
    let mut graph = BTreeMap::new();
    for (name, code) in &modules {
        let mut deps = BTreeSet::new();
        for path in paths(code) {
            let Some(target) = resolve(name, &path, &modules, &reexports) else {
                continue;
            };
            let own_submodule = name.is_empty() || target.starts_with(&format!("{name}::"));
            if target != *name && !target.is_empty() && !own_submodule {
                deps.insert(target);
            }
        }
        graph.insert(name.clone(), deps);
    }
    graph
}

fn wing(module: &str) -> &str {
    module.split("::").next().unwrap()
}

/// A cycle in `graph`, if there is one, as the path around it.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let at = stack.iter().position(|n| n == next).unwrap();
                    let mut cycle = stack[at..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(cycle) = visit(next, graph, state, stack) {
                        return Some(cycle);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if !state.contains_key(node) {
            if let Some(cycle) = visit(node, graph, &mut state, &mut Vec::new()) {
                return Some(cycle);
            }
        }
    }
    None
}

/// The wings docs/design.md's map names, each with the wings it may depend on.
fn design_map() -> BTreeMap<String, BTreeSet<String>> {
    let design =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/design.md"))
            .unwrap();
    let mut map = BTreeMap::new();
    for line in design.lines() {
        let Some(row) = line.strip_prefix("| `") else {
            continue;
        };
        let Some((name, rest)) = row.split_once("/` |") else {
            continue;
        };
        let allowed = rest.rsplit('|').nth(1).unwrap_or_default();
        let wings = allowed
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty() && *w != "nothing")
            .map(str::to_string)
            .collect();
        map.insert(name.to_string(), wings);
    }
    map
}

#[test]
fn no_module_depends_on_itself_through_others() {
    let graph = dependencies();
    assert!(graph.len() > 40, "found only {} modules", graph.len());
    // Every cycle, each reported once: cut the edge that closes it and look again.
    let (mut graph, mut cycles) = (graph, Vec::new());
    while let Some(cycle) = find_cycle(&graph) {
        let (from, to) = (&cycle[cycle.len() - 2], &cycle[cycle.len() - 1]);
        graph.get_mut(from).unwrap().remove(to);
        cycles.push(cycle.join(" -> "));
    }
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

/// Errors are data: no library function fails with a bare `String` (`Result<T, String>`,
/// in any spelling); a `String` as the value of a `Result` is fine.
#[test]
fn no_error_is_a_string() {
    let mut found = Vec::new();
    for (module, code) in modules() {
        let flat: String = code.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut rest = flat.as_str();
        while let Some(at) = rest.find("Result<") {
            rest = &rest[at + "Result<".len()..];
            // The type arguments up to the matching '>'.
            let mut depth = 1;
            let end = rest
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '<' => 1,
                        '>' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(rest.len(), |(i, _)| i);
            let arguments = &rest[..end];
            // The error type: what follows the last top-level comma.
            let (mut depth, mut last_comma) = (0, None);
            for (i, c) in arguments.char_indices() {
                match c {
                    '<' | '(' => depth += 1,
                    '>' | ')' => depth -= 1,
                    ',' if depth == 0 => last_comma = Some(i),
                    _ => {}
                }
            }
            if let Some(i) = last_comma {
                if arguments[i + 1..].trim() == "String" {
                    found.push(format!("{module}: Result<{arguments}>"));
                }
            }
        }
    }
    assert!(found.is_empty(), "errors as strings:\n{}", found.join("\n"));
}

#[test]
fn wings_depend_only_on_what_the_design_map_allows() {
    let graph = dependencies();
    let map = design_map();
    let root_files = ["", "error"];
    for module in graph.keys() {
        if root_files.contains(&module.as_str()) {
            continue;
        }
        assert!(
            map.contains_key(wing(module)),
            "src/{} is in no wing of docs/design.md's map",
            wing(module)
        );
    }
    let mut wings: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut refused = Vec::new();
    for (module, deps) in &graph {
        if root_files.contains(&module.as_str()) {
            continue;
        }
        for dep in deps {
            let (from, to) = (wing(module), wing(dep));
            if from == to || to == "error" {
                continue;
            }
            if !map[from].contains(to) {
                refused.push(format!("{module} -> {dep} ({from}/ may not use {to}/)"));
            }
            wings
                .entry(from.to_string())
                .or_default()
                .insert(to.to_string());
        }
    }
    assert!(
        refused.is_empty(),
        "dependencies docs/design.md's map does not allow:\n{}",
        refused.join("\n")
    );
    if let Some(cycle) = find_cycle(&wings) {
        panic!("wing cycle: {}", cycle.join(" -> "));
    }
    if let Some(cycle) = find_cycle(&map) {
        panic!("docs/design.md's map has a cycle: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_dependency_reader_sees_paths_groups_and_reexports() {
    let found = paths(&without_comments(
        "use crate::{a::b, c::{d, e}};\nlet x = super::f::g(1); // crate::z\n",
    ));
    let found: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        found,
        ["crate::a::b", "crate::c::d", "crate::c::e", "super::f::g"]
    );
    let modules: BTreeMap<String, String> = ["", "a", "a::b", "c"]
        .into_iter()
        .map(|m| (m.to_string(), String::new()))
        .collect();
    let reexports = Reexports::from([(
        String::new(),
        BTreeMap::from([("Thing".to_string(), "a::b".to_string())]),
    )]);
    let crate_path = |p: &str| p.split("::").map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        resolve("c", &crate_path("crate::a::b::item"), &modules, &reexports).as_deref(),
        Some("a::b")
    );
    assert_eq!(
        resolve("c", &crate_path("crate::Thing"), &modules, &reexports).as_deref(),
        Some("a::b")
    );
    assert_eq!(
        resolve("a::b", &crate_path("super::helper"), &modules, &reexports).as_deref(),
        Some("a")
    );
    let cyclic = BTreeMap::from([
        ("x".to_string(), BTreeSet::from(["y".to_string()])),
        ("y".to_string(), BTreeSet::from(["x".to_string()])),
    ]);
    assert!(find_cycle(&cyclic).is_some());
}

/// The most lines a module of src/ (the library's and the binary's) may have before its
/// `#[cfg(test)]` tests: past it, a file holds more than one concept and is split into a
/// folder of one concept per file.
const MOST_LINES: usize = 600;

/// Every .rs file under `dir`, as its path from the crate's root and its text.
fn sources(dir: &Path) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The lines of `code` before its first `#[cfg(test)]` line (all of them when it has none).
fn lines_before_tests(code: &str) -> usize {
    code.lines()
        .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
        .count()
}

#[test]
fn no_module_is_longer_than_600_lines_before_its_tests() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = sources(&src);
    assert!(files.len() > 40, "found only {} files", files.len());
    let long: Vec<String> = files
        .iter()
        .map(|(path, code)| (path, lines_before_tests(code)))
        .filter(|&(_, lines)| lines > MOST_LINES)
        .map(|(path, lines)| format!("{path}: {lines} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "modules over {MOST_LINES} lines before their tests (split each into a folder of one \
         concept per file):\n{}",
        long.join("\n")
    );
}

#[test]
fn lines_are_counted_up_to_the_tests() {
    assert_eq!(lines_before_tests("a\nb\n#[cfg(test)]\nmod tests {}\n"), 2);
    assert_eq!(lines_before_tests("a\n    #[cfg(test)]\n"), 1);
    assert_eq!(lines_before_tests("a\nb\n"), 2);
}
