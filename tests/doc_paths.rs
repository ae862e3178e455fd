//! The doc examples of the crates the facade re-exports (`zonal::runtime`, `zonal::topology`,
//! `zonal::policy`, and the runtime's items at `zonal::`'s root) appear on the facade's own
//! pages, so they are written with the paths a `zonal` user writes: a shown line of a code
//! block in a `///` or `//!` comment of those crates names no `zonal_runtime::`,
//! `zonal_topology::` or `zonal_policy::` path (hidden lines, `# …`, may: each example's
//! first line is `# use zonal_runtime::doc_facade as zonal;` or the like), and every
//! `zonal::NAME` path starts with a name the facade has at its root (`src/lib.rs`).
//!
//! Read from the sources, as `tests/layers.rs` reads them: no build of the crates' docs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The re-exported crates: directory under `crates/`, and the facade's name for the crate.
const CRATES: &[(&str, &str)] = &[
    ("runtime", "zonal_runtime"),
    ("topology", "zonal_topology"),
    ("policy", "zonal_policy"),
];

/// The paths that do not paste into a `zonal` user's code.
const CRATE_PATHS: &[&str] = &["zonal_runtime::", "zonal_topology::", "zonal_policy::"];

/// One shown line of a doc example that breaks a rule.
#[derive(Debug, PartialEq, Eq)]
struct Finding {
    file: String,
    line: usize,
    text: String,
    why: String,
}

/// Whether rustdoc hides this line of a Rust code block (`#` alone, or `# ` then code;
/// `#[attr]`, `#![attr]` and `##` are shown).
fn hidden(line: &str) -> bool {
    let t = line.trim_start();
    t == "#" || t.starts_with("# ")
}

/// The text of a doc comment line (`///` or `//!`, one space after it dropped), if it is one.
fn doc_text(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let rest = t.strip_prefix("///").or_else(|| t.strip_prefix("//!"))?;
    // `////` is an ordinary comment.
    if t.starts_with("////") {
        return None;
    }
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// Every shown line of every fenced code block in the doc comments of `src`:
/// `(line number, text)`. A block ends at its closing fence or where the comment ends.
fn example_lines(src: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    for (i, line) in src.lines().enumerate() {
        let Some(text) = doc_text(line) else {
            in_block = false;
            continue;
        };
        if text.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block && !hidden(text) {
            out.push((i + 1, text.to_owned()));
        }
    }
    out
}

/// The names the facade has at its root: its modules, functions, types and macros, and what
/// its `pub use` items bring (a group's leaves, an `as` alias).
fn facade_root_names(lib_rs: &str) -> BTreeSet<String> {
    let code: String = lib_rs
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut names = BTreeSet::new();
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect()
    };
    for item in code.split(';').flat_map(|s| s.split('}')) {
        let item = item.trim();
        for kw in [
            "pub mod ",
            "pub fn ",
            "pub type ",
            "pub struct ",
            "pub enum ",
            "pub trait ",
            "macro_rules! ",
        ] {
            if let Some(at) = item.find(kw) {
                if let Some(name) = words(&item[at + kw.len()..]).first() {
                    names.insert(name.clone());
                }
            }
        }
    }
    // `pub use a::{b, c::d as e};`, `pub use a::b;`, `pub use a as b;`.
    let mut rest = code.as_str();
    while let Some(at) = rest.find("pub use ") {
        let after = &rest[at + "pub use ".len()..];
        let end = after.find(';').unwrap_or(after.len());
        let tree = &after[..end];
        // A group's prefix (`a::{`) is no leaf: each leaf is what follows the last `{`.
        for leaf in tree
            .split([',', '}'])
            .map(|s| s.rsplit('{').next().unwrap_or(s).trim())
            .filter(|s| !s.is_empty())
        {
            let name = match leaf.split_once(" as ") {
                Some((_, alias)) => alias.trim(),
                None => leaf.rsplit("::").next().unwrap_or(leaf).trim(),
            };
            if !name.is_empty() && name != "*" && name != "self" {
                names.insert(name.to_owned());
            }
        }
        rest = &after[end..];
    }
    names
}

/// The rules, for one file's source.
fn check(file: &str, src: &str, root: &BTreeSet<String>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (line, text) in example_lines(src) {
        let code = text.split("//").next().unwrap_or(&text);
        for path in CRATE_PATHS {
            if code.contains(path) {
                out.push(Finding {
                    file: file.to_owned(),
                    line,
                    text: text.clone(),
                    why: format!("`{path}` (write `zonal::…`)"),
                });
            }
        }
        let mut from = 0;
        while let Some(at) = code[from..].find("zonal::") {
            let start = from + at;
            from = start + "zonal::".len();
            let before = code[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let name: String = code[from..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            // `zonal::{a, b}` groups: every leaf's first segment.
            let names: Vec<String> = if name.is_empty() && code[from..].starts_with('{') {
                let group = &code[from + 1..];
                let group = &group[..group.find('}').unwrap_or(group.len())];
                group
                    .split(',')
                    .filter_map(|s| s.trim().split("::").next())
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect()
            } else {
                vec![name]
            };
            for name in names {
                if !root.contains(&name) {
                    out.push(Finding {
                        file: file.to_owned(),
                        line,
                        text: text.clone(),
                        why: format!("`zonal::{name}` is not at the facade's root"),
                    });
                }
            }
        }
    }
    out
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn doc_examples_of_the_re_exported_crates_use_the_facades_paths() {
    let ws = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib_rs = std::fs::read_to_string(ws.join("src/lib.rs")).expect("src/lib.rs");
    let root = facade_root_names(&lib_rs);
    let mut findings = Vec::new();
    let mut examples = 0;
    for (dir, krate) in CRATES {
        assert!(
            lib_rs.contains(&format!("pub use {krate} as {dir};")),
            "the facade no longer re-exports {krate} as `zonal::{dir}`: update CRATES"
        );
        let mut files = Vec::new();
        rs_files(&ws.join("crates").join(dir).join("src"), &mut files);
        assert!(!files.is_empty(), "crates/{dir}/src not read");
        files.sort();
        for path in files {
            let src = std::fs::read_to_string(&path).expect("readable source");
            let rel = path.strip_prefix(ws).unwrap_or(&path).display().to_string();
            examples += example_lines(&src).len();
            findings.extend(check(&rel, &src, &root));
        }
    }
    // The scan sees the examples (the check is not vacuous).
    assert!(examples > 500, "only {examples} example lines read");
    let text: Vec<String> = findings
        .iter()
        .map(|f| format!("{}:{}: {}\n    {}", f.file, f.line, f.why, f.text.trim()))
        .collect();
    assert!(
        findings.is_empty(),
        "{} doc example lines do not paste into a `zonal` user's code:\n{}",
        findings.len(),
        text.join("\n")
    );
}

// --- The reader's own tests ------------------------------------------------------------

#[test]
fn reads_shown_lines_of_code_blocks_only() {
    let src = "/// Text naming zonal_runtime::X outside a block.\n\
               ///\n\
               /// ```\n\
               /// # use zonal_runtime::doc_facade as zonal;\n\
               /// let p = zonal_runtime::ThreadPoolBuilder::new();\n\
               /// #[derive(Debug)] struct S;\n\
               /// ```\n\
               fn f() {}\n\
               //! ```no_run\n\
               //!     use zonal_topology::NodeId;\n\
               //! ```\n\
               // ```\n\
               // zonal_policy::Policy in a plain comment\n";
    let lines = example_lines(src);
    let texts: Vec<&str> = lines.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        texts,
        [
            "let p = zonal_runtime::ThreadPoolBuilder::new();",
            "#[derive(Debug)] struct S;",
            "    use zonal_topology::NodeId;"
        ]
    );
    assert_eq!(lines[0].0, 5);
}

#[test]
fn reads_the_facades_root_names() {
    let lib = "pub use zonal_runtime as runtime;\n\
               pub mod prelude;\n\
               pub use zonal_runtime::{join, scope as s, ThreadPool};\n\
               pub use zonal_runtime::task;\n\
               // pub use zonal_runtime::Hidden;\n\
               pub type ThreadPoolBuildError = BuildError;\n\
               #[macro_export]\nmacro_rules! m { () => {} }\n";
    let names = facade_root_names(lib);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "ThreadPool",
            "ThreadPoolBuildError",
            "join",
            "m",
            "prelude",
            "runtime",
            "s",
            "task"
        ]
    );
}

#[test]
fn reports_crate_paths_and_names_not_at_the_root() {
    let root: BTreeSet<String> = ["ThreadPoolBuilder", "runtime", "topology"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    let src = "/// ```\n\
               /// # use zonal_runtime::doc_facade as zonal;\n\
               /// use zonal::runtime::NodeBuffer;\n\
               /// let p = zonal::ThreadPoolBuilder::new();\n\
               /// let n = zonal::NodeBuffer::new_in(&p);\n\
               /// use zonal::{ThreadPoolBuilder, topology::NodeId, Missing};\n\
               /// let m = zonal_topology::Machine::flat(1); // zonal_policy:: in a comment\n\
               /// let s = my_zonal::X;\n\
               /// ```\n";
    let found: Vec<(usize, String)> = check("f.rs", src, &root)
        .into_iter()
        .map(|f| (f.line, f.why))
        .collect();
    assert_eq!(
        found,
        [
            (
                5,
                "`zonal::NodeBuffer` is not at the facade's root".to_owned()
            ),
            (6, "`zonal::Missing` is not at the facade's root".to_owned()),
            (7, "`zonal_topology::` (write `zonal::…`)".to_owned()),
        ]
    );
}
