//! The policy crate is layered: no file of `src/` imports another that imports it back,
//! through any chain.
//!
//! An *import* is a `use crate::…` item or any `crate::…` / `$crate::…` path in a file of
//! `src/` (code and doc links alike). A path is resolved to the file that defines what it
//! names: its longest prefix that is a module file, then through that module's `use`
//! re-exports (`crate::BUSY_FACTOR` names `state.rs`, where it is defined, not `lib.rs`,
//! which re-exports it). `mod` declarations and `super::` / child-module paths are the
//! module tree, not imports.
//!
//! The layers this keeps (bottom up): `config.rs` (every configuration type, the errors and
//! the range checks; imports nothing of the crate) → the vocabulary (`view`, `decision`,
//! `ageing`, `state`, …) → the move rules and the conservative filter → the Linux walk
//! (`policies/linux/`, parameterised by its `Selection`) → each policy as a leaf over it →
//! the catalogue (`policies.rs`) → `lib.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module path below the crate root (`["policies", "linux"]`); empty for `lib.rs`.
type ModPath = Vec<String>;

/// One leaf of a `use` tree: its path segments and its alias (`as name`).
type UseLeaf = (Vec<String>, Option<String>);

struct Crate {
    /// Module path → the file that defines it (relative to `src/`).
    files: BTreeMap<ModPath, String>,
    /// Module path → the file's text.
    text: BTreeMap<ModPath, String>,
    /// Module path → its `use` items: (path segments, alias).
    uses: BTreeMap<ModPath, Vec<UseLeaf>>,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_path(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The text with `//` comments removed (for parsing `use` items only).
fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `use` items of a file: each starts a line (after `pub`, `pub(crate)` or
/// `pub(super)`), and runs to the next `;`.
fn use_items(code: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].rsplit('\n').next().unwrap_or("");
        let prefix = before.trim();
        let starts_item = matches!(prefix, "" | "pub" | "pub(crate)" | "pub(super)");
        let after = &rest[i + 4..];
        if starts_item {
            if let Some(end) = after.find(';') {
                items.push(after[..end].to_owned());
                rest = &after[end..];
                continue;
            }
        }
        rest = after;
    }
    items
}

/// Splits a use tree into its leaves: `a::{b, c::{d as e}}` → `a::b`, `a::c::d as e`.
fn parse_tree(prefix: &[String], tree: &str, out: &mut Vec<UseLeaf>) {
    let tree = tree.trim();
    if tree.is_empty() {
        return;
    }
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = tree[..open]
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let close = tree.rfind('}').expect("balanced braces in a use tree");
        let mut segs = prefix.to_vec();
        segs.extend(head);
        let (mut depth, mut start) = (0usize, open + 1);
        for (k, ch) in tree.char_indices().take(close).skip(open + 1) {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parse_tree(&segs, &tree[start..k], out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        parse_tree(&segs, &tree[start..close], out);
    } else {
        let (path, alias) = match tree.split_once(" as ") {
            Some((p, a)) => (p.trim(), Some(a.trim().to_owned())),
            None => (tree, None),
        };
        let mut segs = prefix.to_vec();
        segs.extend(
            path.split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
        out.push((segs, alias));
    }
}

impl Crate {
    fn load() -> Self {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut paths = Vec::new();
        rust_files(&src, &mut paths);
        let (mut files, mut text, mut uses) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        for p in paths {
            let rel = p.strip_prefix(&src).expect("under src/");
            let m = module_path(rel);
            let t = fs::read_to_string(&p).expect("read a source file");
            let mut items = Vec::new();
            for item in use_items(&strip_comments(&t)) {
                parse_tree(&[], &item, &mut items);
            }
            files.insert(m.clone(), rel.to_string_lossy().replace('\\', "/"));
            text.insert(m.clone(), t);
            uses.insert(m, items);
        }
        Self { files, text, uses }
    }

    /// A `use` path of module `m` made absolute (`None`: another crate's).
    fn absolute(&self, m: &ModPath, segs: &[String]) -> Option<Vec<String>> {
        let first = segs.first()?;
        if first == "crate" || first == "$crate" {
            return Some(segs[1..].to_vec());
        }
        let mut base = m.clone();
        let mut rest = segs;
        while let Some(s) = rest.first() {
            match s.as_str() {
                "self" => {}
                "super" => {
                    base.pop();
                }
                _ => break,
            }
            rest = &rest[1..];
        }
        let head = rest.first()?;
        let mut child = base.clone();
        child.push(head.clone());
        if self.files.contains_key(&child) || rest.len() < segs.len() {
            base.extend(rest.iter().cloned());
            Some(base)
        } else {
            None
        }
    }

    /// What module `m` re-exports by name.
    fn reexports(&self, m: &ModPath) -> BTreeMap<String, Vec<String>> {
        let mut r = BTreeMap::new();
        for (segs, alias) in &self.uses[m] {
            let Some(mut abs) = self.absolute(m, segs) else {
                continue;
            };
            let mut name = alias
                .clone()
                .unwrap_or_else(|| segs.last().cloned().unwrap_or_default());
            if name == "self" {
                abs.pop();
                name = abs.last().cloned().unwrap_or_default();
            }
            r.insert(name, abs);
        }
        r
    }

    /// The file defining what an absolute path names.
    fn resolve(&self, path: &[String], depth: usize) -> ModPath {
        let mut cur: ModPath = Vec::new();
        let mut i = 0;
        while i < path.len() {
            let mut next = cur.clone();
            next.push(path[i].clone());
            if !self.files.contains_key(&next) {
                break;
            }
            cur = next;
            i += 1;
        }
        if i < path.len() && depth < 16 {
            if let Some(target) = self.reexports(&cur).get(&path[i]) {
                if target.as_slice() != path {
                    let mut full = target.clone();
                    full.extend(path[i + 1..].iter().cloned());
                    return self.resolve(&full, depth + 1);
                }
            }
        }
        cur
    }

    /// Every `crate::…` path in a file's text (code and docs).
    fn crate_paths(text: &str) -> Vec<Vec<String>> {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(k) = text[from..].find("crate::") {
            let at = from + k;
            from = at + "crate::".len();
            let prev = at.checked_sub(1).map(|p| bytes[p]);
            if prev.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
                continue;
            }
            let tail: String = text[from..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let segs: Vec<String> = tail
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            if !segs.is_empty() {
                out.push(segs);
            }
        }
        out
    }

    /// File → the files it imports.
    fn graph(&self) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
        let mut g = BTreeMap::new();
        for (m, t) in &self.text {
            let mut edges = BTreeSet::new();
            for (segs, _) in &self.uses[m] {
                if segs.first().is_some_and(|s| s == "crate" || s == "$crate") {
                    edges.insert(self.resolve(&segs[1..], 0));
                }
            }
            for segs in Self::crate_paths(t) {
                edges.insert(self.resolve(&segs, 0));
            }
            edges.remove(m);
            g.insert(m.clone(), edges);
        }
        g
    }
}

/// A cycle of `g`, as files, if there is one.
fn find_cycle(g: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Option<Vec<ModPath>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        v: &ModPath,
        g: &BTreeMap<ModPath, BTreeSet<ModPath>>,
        mark: &mut BTreeMap<ModPath, Mark>,
        stack: &mut Vec<ModPath>,
    ) -> Option<Vec<ModPath>> {
        mark.insert(v.clone(), Mark::Open);
        stack.push(v.clone());
        for w in &g[v] {
            match mark.get(w).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let start = stack.iter().position(|x| x == w).unwrap_or(0);
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(w.clone());
                    return Some(cycle);
                }
                Mark::New if g.contains_key(w) => {
                    if let Some(c) = visit(w, g, mark, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        mark.insert(v.clone(), Mark::Done);
        None
    }
    let mut mark = BTreeMap::new();
    for v in g.keys() {
        if mark.get(v).copied().unwrap_or(Mark::New) == Mark::New {
            let mut stack = Vec::new();
            if let Some(c) = visit(v, g, &mut mark, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

fn m(path: &str) -> ModPath {
    if path.is_empty() {
        Vec::new()
    } else {
        path.split("::").map(str::to_owned).collect()
    }
}

#[test]
fn no_import_circle_in_the_policy_crate() {
    let krate = Crate::load();
    let g = krate.graph();
    if let Some(cycle) = find_cycle(&g) {
        let files: Vec<&str> = cycle.iter().map(|p| krate.files[p].as_str()).collect();
        panic!("import circle: {}", files.join(" -> "));
    }
}

#[test]
fn the_config_module_is_a_leaf_and_the_catalogue_is_on_top() {
    let krate = Crate::load();
    let g = krate.graph();
    assert!(
        g[&m("config")].is_empty(),
        "config.rs imports {:?}",
        g[&m("config")]
    );
    // The graph sees real imports (the check is not vacuous).
    assert!(g[&m("policies")].contains(&m("config")));
    assert!(g[&m("policies::thread_aware")].contains(&m("policies::linux")));
    // Re-exports are followed to the defining file.
    let seg = |p: &str| -> Vec<String> { p.split("::").map(str::to_owned).collect() };
    assert_eq!(krate.resolve(&seg("BUSY_FACTOR"), 0), m("state"));
    assert_eq!(krate.resolve(&seg("PolicyName::NUMALB"), 0), m("config"));
    assert_eq!(krate.resolve(&seg("LinuxEra"), 0), m("config"));
    assert_eq!(
        krate.resolve(&seg("policies::linux::NR_MIGRATE_MAX"), 0),
        m("policies::linux::pass")
    );
    // No policy file imports another, and the Linux walk imports none of them.
    let policies = [
        "thread_aware",
        "numalb",
        "average_weight",
        "unrestricted",
        "no_policy",
    ];
    for (from, edges) in &g {
        let in_policies = from.first().is_some_and(|s| s == "policies") && from.len() > 1;
        if !in_policies {
            continue;
        }
        for p in policies {
            let target = m(&format!("policies::{p}"));
            if edges.contains(&target) && !from.starts_with(&target) {
                panic!("{} imports policies/{p}.rs", krate.files[from]);
            }
        }
    }
    // Nothing below the catalogue imports it.
    for (from, edges) in &g {
        if from.is_empty() {
            continue;
        }
        let catalogue = from.len() == 1 && from[0] == "policies";
        let below = !catalogue && !from.starts_with(&m("policies::test"));
        if below {
            assert!(
                !edges.contains(&m("policies")),
                "{} imports the catalogue",
                krate.files[from]
            );
        }
    }
}

#[test]
fn the_parser_sees_grouped_and_renamed_uses() {
    let mut out = Vec::new();
    parse_tree(&[], "crate::{a::B, c::{d as e, self}}", &mut out);
    let flat: Vec<String> = out
        .iter()
        .map(|(s, a)| format!("{}{:?}", s.join("::"), a))
        .collect();
    assert_eq!(
        flat,
        [
            "crate::a::BNone",
            "crate::c::dSome(\"e\")",
            "crate::c::selfNone"
        ]
    );
    assert_eq!(
        Crate::crate_paths("x pub(crate) y [`A`](crate::policies::CATALOGUE) $crate::Rng"),
        [m("policies::CATALOGUE"), m("Rng")]
    );
}
