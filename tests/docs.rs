//! What a user reads first stays true: the feature tables of README.md and of the facade's
//! crate docs list exactly Cargo.toml's features, the README's first screen names the two
//! commands, its code blocks are doc tests (none ignored, each `no_run` with its reason,
//! every block tagged), and its licence section names every published crate.
//!
//! The README's Rust blocks themselves compile and run as doc tests of the facade
//! (`src/lib.rs` includes README.md under `cfg(doctest)`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The features declared in the `[features]` table of the facade's Cargo.toml, less
/// `default`.
fn cargo_features() -> BTreeSet<String> {
    let manifest = read(&root().join("Cargo.toml"));
    let mut in_features = false;
    let mut found = BTreeSet::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_features = line == "[features]";
            continue;
        }
        if !in_features || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name = line
            .split('=')
            .next()
            .expect("a split has a first part")
            .trim()
            .trim_matches('"');
        if name != "default" {
            found.insert(name.to_string());
        }
    }
    assert!(!found.is_empty(), "Cargo.toml has a [features] table");
    found
}

/// The first column of the table between the `features:begin` and `features:end` markers.
fn table_features(text: &str, what: &str) -> BTreeSet<String> {
    let begin = text
        .find("<!-- features:begin")
        .unwrap_or_else(|| panic!("{what} has the features:begin marker"));
    let end = text[begin..]
        .find("<!-- features:end -->")
        .unwrap_or_else(|| panic!("{what} has the features:end marker"))
        + begin;
    let mut found = BTreeSet::new();
    for line in text[begin..end].lines() {
        let line = line.trim_start_matches("//!").trim();
        let Some(cell) = line.strip_prefix('|').and_then(|l| l.split('|').next()) else {
            continue;
        };
        let cell = cell.trim();
        if let Some(name) = cell.strip_prefix('`').and_then(|c| c.strip_suffix('`')) {
            assert!(
                found.insert(name.to_string()),
                "{what}: feature `{name}` listed twice"
            );
        }
    }
    found
}

fn check_table(text: &str, what: &str) {
    let cargo = cargo_features();
    let table = table_features(text, what);
    let missing: Vec<_> = cargo.difference(&table).collect();
    let extra: Vec<_> = table.difference(&cargo).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{what}'s feature table differs from Cargo.toml's [features]: missing {missing:?}, \
         not in Cargo.toml {extra:?}"
    );
}

#[test]
fn readme_feature_table_is_cargo_toml_features() {
    check_table(&read(&root().join("README.md")), "README.md");
}

#[test]
fn crate_docs_feature_table_is_cargo_toml_features() {
    check_table(&read(&root().join("src/lib.rs")), "src/lib.rs");
}

#[test]
fn table_reader_sees_a_missing_and_an_extra_feature() {
    let text = "<!-- features:begin -->\n| feature | what |\n|---|---|\n| `tokio` | x |\n\
                | `nonsense` | y |\n<!-- features:end -->\n";
    let table = table_features(text, "sample");
    assert_eq!(
        table,
        ["nonsense", "tokio"]
            .map(String::from)
            .into_iter()
            .collect()
    );
    assert!(cargo_features().contains("tokio"));
    assert!(!cargo_features().contains("nonsense"));
}

#[test]
fn readme_first_screen_names_the_two_commands() {
    let readme = read(&root().join("README.md"));
    let first: String = readme.lines().take(40).collect::<Vec<_>>().join("\n");
    for command in ["scripts/main.sh", "scripts/test.sh"] {
        assert!(
            first.contains(command),
            "README.md's first 40 lines do not name `{command}`"
        );
        assert!(
            root().join(command).is_file(),
            "README.md names `{command}`, which does not exist"
        );
    }
}

/// Every fenced block of the README: (line number, info string, first line of its body).
fn fences(text: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let info = info.trim().to_string();
        let mut first = None;
        for (_, body) in lines.by_ref() {
            if body.trim_start().starts_with("```") {
                break;
            }
            first.get_or_insert_with(|| body.trim().to_string());
        }
        out.push((i + 1, info, first.unwrap_or_default()));
    }
    out
}

#[test]
fn readme_blocks_are_tagged_and_none_is_ignored() {
    let readme = read(&root().join("README.md"));
    let blocks = fences(&readme);
    assert!(
        blocks
            .iter()
            .filter(|(_, info, _)| info.starts_with("rust"))
            .count()
            >= 5,
        "README.md has its Rust examples"
    );
    for (line, info, first) in &blocks {
        let attrs: Vec<&str> = info.split(',').map(str::trim).collect();
        // An untagged block is a Rust doc test to rustdoc: say what it is.
        assert!(
            !info.is_empty(),
            "README.md:{line}: a block without a language (`rust`, `sh`, `text`, `toml`)"
        );
        assert!(
            !attrs.contains(&"ignore"),
            "README.md:{line}: an `ignore` block; make it compile, or mark non-Rust `sh`/`text`"
        );
        if attrs.contains(&"no_run") {
            assert!(
                first.starts_with("// no_run:"),
                "README.md:{line}: a `no_run` block whose first line is not `// no_run: <why>`"
            );
        }
    }
}

/// The workspace's packages that are published: every member whose manifest does not say
/// `publish = false`, and the facade.
fn published_crates() -> Vec<String> {
    let manifest = read(&root().join("Cargo.toml"));
    let members = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("members"))
        .expect("the workspace lists its members");
    let mut names = vec!["zonal".to_string()];
    for member in members.split('"').skip(1).step_by(2) {
        let text = read(&root().join(member).join("Cargo.toml"));
        if text.lines().any(|l| l.trim() == "publish = false") {
            continue;
        }
        let name = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("name = "))
            .unwrap_or_else(|| panic!("{member}/Cargo.toml has a name"))
            .trim_matches('"')
            .to_string();
        names.push(name);
    }
    names
}

#[test]
fn readme_licence_section_names_every_published_crate() {
    let readme = read(&root().join("README.md"));
    let start = readme
        .find("\n## License")
        .expect("README.md has a License section");
    let section = &readme[start..];
    let published = published_crates();
    assert!(
        published.iter().any(|n| n == "zonal-mpi"),
        "zonal-mpi is published: {published:?}"
    );
    for name in &published {
        assert!(
            section.contains(&format!("`{name}`")),
            "README.md's License section does not name the published crate `{name}`"
        );
    }
}

#[test]
fn examples_readme_is_the_readme_first_program() {
    let readme = read(&root().join("README.md"));
    let start = readme
        .find("## A first program")
        .expect("README.md has \"A first program\"");
    let body_start = readme[start..]
        .find("```rust\n")
        .expect("a Rust block follows")
        + start
        + "```rust\n".len();
    let body_end = readme[body_start..].find("```\n").expect("the block ends") + body_start;
    let program = &readme[body_start..body_end];
    let example = read(&root().join("examples/readme.rs"));
    let code: String = example
        .lines()
        .skip_while(|l| l.starts_with("//!") || l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(
        code, program,
        "examples/readme.rs differs from README.md's first program"
    );
}

#[test]
fn readme_blocks_are_doc_tests_of_the_facade() {
    let lib = read(&root().join("src/lib.rs"));
    let at = lib
        .find("#[doc = include_str!(\"../README.md\")]")
        .expect("src/lib.rs includes README.md as documentation");
    let before = &lib[..at];
    assert!(
        before.trim_end().ends_with("#[cfg(doctest)]"),
        "src/lib.rs includes README.md under #[cfg(doctest)], so its blocks run as doc tests"
    );
}
