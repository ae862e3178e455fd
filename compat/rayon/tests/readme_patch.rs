//! The README's `[patch.crates-io]` lines, as written, in a throwaway package: its
//! "A whole dependency tree on Zonal" section's path form (between the `patch-path`
//! markers), both ways (`rayon-core` and `rayon`; `rayon-core` only). The package lies
//! beside a `zonal` link to this repository, where the README's `../zonal` points, depends
//! on the published `rayon = "1.12"`, and prints the name of the thread its parallel work
//! ran on: a Zonal worker's. Cargo must take the patch (no "was not used" warning) and
//! `cargo metadata` must show the patched packages as the repository's.
//!
//! It runs cargo (`$CARGO`, the one running this test): offline first, online only when
//! the registry cache lacks a package. Its build goes to this test's own temporary folder
//! under the target directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The lines of the fenced block between `<!-- NAME:begin -->` and `<!-- NAME:end -->`.
fn readme_block(name: &str) -> String {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let begin = format!("<!-- {name}:begin -->");
    let end = format!("<!-- {name}:end -->");
    let start = readme
        .find(&begin)
        .unwrap_or_else(|| panic!("README.md has no {begin}"))
        + begin.len();
    let stop = start
        + readme[start..]
            .find(&end)
            .unwrap_or_else(|| panic!("README.md has no {end}"));
    let block = readme[start..stop].trim();
    let body = block
        .strip_prefix("```toml\n")
        .and_then(|b| b.strip_suffix("```"))
        .unwrap_or_else(|| panic!("the {name} block is not one ```toml block: {block}"));
    assert!(
        body.starts_with("[patch.crates-io]\n"),
        "the {name} block starts with [patch.crates-io]: {body}"
    );
    body.to_owned()
}

const MAIN: &str = r#"
use rayon::prelude::*;

fn main() {
    let names: Vec<String> = (0..64)
        .into_par_iter()
        .map(|_| std::thread::current().name().unwrap_or("unnamed").to_owned())
        .collect();
    let sum: u64 = (1..=100u64).into_par_iter().sum();
    assert_eq!(sum, 5050);
    let (a, _) = rayon::join(
        || std::thread::current().name().unwrap_or("unnamed").to_owned(),
        || (),
    );
    println!("iterator ran on: {}", names[0]);
    println!("join ran on: {a}");
}
"#;

fn cargo(dir: &Path, target: &Path, args: &[&str]) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let run = |offline: bool| {
        let mut cmd = Command::new(&cargo);
        cmd.args(args)
            .current_dir(dir)
            .env("CARGO_TARGET_DIR", target)
            .env_remove("RUSTFLAGS")
            .env_remove("ZONAL_NUM_THREADS")
            .env_remove("RAYON_NUM_THREADS");
        if offline {
            cmd.arg("--offline");
        }
        cmd.output().unwrap()
    };
    let out = run(true);
    if out.status.success() {
        return out;
    }
    run(false)
}

/// Writes the throwaway package `name` beside the `zonal` link, with `patch` as its
/// `[patch.crates-io]` lines; builds and runs it; returns what it printed.
fn build_and_run(name: &str, patch: &str, patched: &[&str]) -> String {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme-patch");
    std::fs::create_dir_all(&base).unwrap();
    let link = base.join("zonal");
    match std::os::unix::fs::symlink(repo_root(), &link) {
        // The other test made it, or an earlier run: checked below.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        other => other.unwrap(),
    }
    assert_eq!(link.canonicalize().unwrap(), repo_root(), "{link:?}");
    let app = base.join(name);
    std::fs::create_dir_all(app.join("src")).unwrap();
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[dependencies]\nrayon = \"1.12\"\n\n{patch}\n[workspace]\n"
    );
    std::fs::write(app.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(app.join("src/main.rs"), MAIN).unwrap();
    let _ = std::fs::remove_file(app.join("Cargo.lock"));
    let target = base.join("target");

    let built = cargo(&app, &target, &["build"]);
    let stderr = String::from_utf8_lossy(&built.stderr);
    assert!(
        built.status.success(),
        "{name}: cargo build failed:\n{stderr}"
    );
    assert!(
        !stderr.contains("was not used"),
        "{name}: Cargo did not use the patch:\n{stderr}"
    );

    // Each patched package is the repository's (through the link), the others the registry's.
    let meta = cargo(&app, &target, &["metadata", "--format-version", "1"]);
    assert!(
        meta.status.success(),
        "{}",
        String::from_utf8_lossy(&meta.stderr)
    );
    let meta = String::from_utf8_lossy(&meta.stdout);
    for package in ["rayon", "rayon-core"] {
        // Through the link, or the link resolved: either is the repository's package.
        let from_repo = [&link, &repo_root()].iter().any(|root| {
            let manifest = root.join("compat").join(package).join("Cargo.toml");
            meta.contains(&format!("\"manifest_path\":\"{}\"", manifest.display()))
        });
        let expected = patched.contains(&package);
        assert_eq!(
            from_repo, expected,
            "{name}: {package} from the repository: {from_repo}, expected {expected}"
        );
    }

    let ran = cargo(&app, &target, &["run", "--quiet"]);
    assert!(
        ran.status.success(),
        "{name}: the program failed:\n{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    String::from_utf8_lossy(&ran.stdout).into_owned()
}

fn assert_ran_on_zonal(out: &str) {
    for what in ["iterator ran on: ", "join ran on: "] {
        let line = out
            .lines()
            .find(|l| l.starts_with(what))
            .unwrap_or_else(|| panic!("no {what:?} line: {out}"));
        assert!(
            line[what.len()..].starts_with("zonal-worker-"),
            "not on a Zonal worker: {line}"
        );
    }
}

#[test]
fn the_readmes_path_patch_runs_the_tree_on_zonal() {
    let patch = readme_block("patch-path");
    assert!(
        patch.contains("rayon-core = ") && patch.contains("\nrayon = "),
        "{patch}"
    );
    let out = build_and_run("patch-both", &patch, &["rayon", "rayon-core"]);
    assert_ran_on_zonal(&out);
}

#[test]
fn the_readmes_path_patch_without_its_rayon_line_runs_real_rayon_on_zonal() {
    let patch: String = readme_block("patch-path")
        .lines()
        .filter(|l| !l.starts_with("rayon = "))
        .map(|l| format!("{l}\n"))
        .collect();
    let out = build_and_run("patch-core-only", &patch, &["rayon-core"]);
    assert_ran_on_zonal(&out);
}
