//! The README's `[patch.crates-io]` lines, as written, in a throwaway package: its
//! "A whole dependency tree on Zonal" section's path form (between the `patch-path`
//! markers), both ways (`rayon-core` and `rayon`; `rayon-core` only), and its git form
//! (`patch-git`). The package lies beside a `zonal` link to this repository, where the
//! README's `../zonal` points, depends on the published `rayon = "1.12"`, and prints the
//! name of the thread its parallel work ran on: a Zonal worker's. Cargo must take the patch
//! (no "was not used" warning) and `cargo metadata` must show the patched packages where
//! the lines say.
//!
//! The git form fetches `https://github.com/zonal-rs/zonal` as written: Cargo fetches with
//! the `git` command (`CARGO_NET_GIT_FETCH_WITH_CLI`), and a git config of the test's own
//! (`GIT_CONFIG_GLOBAL`) tells git that this URL is this repository (`insteadOf`), so what
//! is built is this repository's committed `HEAD` (not uncommitted changes), with no
//! network. Its git cache is a `CARGO_HOME` of the test's own whose `registry` is a link to
//! the real one: the user's own git cache never holds this repository under GitHub's URL.
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

fn cargo(dir: &Path, target: &Path, env: &[(String, PathBuf)], args: &[&str]) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let run = |offline: bool| {
        let mut cmd = Command::new(&cargo);
        cmd.args(args)
            .current_dir(dir)
            .env("CARGO_TARGET_DIR", target)
            .env_remove("RUSTFLAGS")
            .env_remove("ZONAL_NUM_THREADS")
            .env_remove("RAYON_NUM_THREADS");
        for (k, v) in env {
            cmd.env(k, v);
        }
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

fn base() -> PathBuf {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme-patch");
    std::fs::create_dir_all(&base).unwrap();
    base
}

/// Every `manifest_path` in `cargo metadata`'s output.
fn manifest_paths(meta: &str) -> Vec<&str> {
    let key = "\"manifest_path\":\"";
    meta.match_indices(key)
        .filter_map(|(at, _)| {
            let rest = &meta[at + key.len()..];
            rest.find('"').map(|end| &rest[..end])
        })
        .collect()
}

/// Where the patched packages come from: under one of these folders.
struct Patched<'a> {
    packages: &'a [&'a str],
    under: Vec<PathBuf>,
}

/// Writes the throwaway package `name` beside the `zonal` link, with `patch` as its
/// `[patch.crates-io]` lines; builds and runs it (with `env` added); returns what it
/// printed.
fn build_and_run(
    name: &str,
    patch: &str,
    patched: Patched<'_>,
    env: &[(String, PathBuf)],
) -> String {
    let base = base();
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

    let built = cargo(&app, &target, env, &["build"]);
    let stderr = String::from_utf8_lossy(&built.stderr);
    assert!(
        built.status.success(),
        "{name}: cargo build failed:\n{stderr}"
    );
    assert!(
        !stderr.contains("was not used"),
        "{name}: Cargo did not use the patch:\n{stderr}"
    );

    // Each patched package is the repository's, the others the registry's.
    let meta = cargo(&app, &target, env, &["metadata", "--format-version", "1"]);
    assert!(
        meta.status.success(),
        "{}",
        String::from_utf8_lossy(&meta.stderr)
    );
    let meta = String::from_utf8_lossy(&meta.stdout);
    let paths = manifest_paths(&meta);
    for package in ["rayon", "rayon-core"] {
        let patch_manifest = format!("/compat/{package}/Cargo.toml");
        // The registry's is in a folder `PACKAGE-VERSION`.
        let registry = |p: &str| {
            Path::new(p)
                .parent()
                .and_then(|dir| {
                    dir.file_name()?
                        .to_str()?
                        .strip_prefix(&format!("{package}-"))
                })
                .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
        };
        let found: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|p| p.ends_with(&patch_manifest) || registry(p))
            .collect();
        assert_eq!(
            found.len(),
            1,
            "{name}: one {package} in the graph: {found:?}"
        );
        let from_patch = found[0].ends_with(&patch_manifest)
            && patched
                .under
                .iter()
                .any(|dir| Path::new(found[0]).starts_with(dir));
        let expected = patched.packages.contains(&package);
        assert_eq!(
            from_patch, expected,
            "{name}: {package} from the patch: {from_patch}, expected {expected} ({})",
            found[0]
        );
    }

    let ran = cargo(&app, &target, env, &["run", "--quiet"]);
    assert!(
        ran.status.success(),
        "{name}: the program failed:\n{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    String::from_utf8_lossy(&ran.stdout).into_owned()
}

/// The repository, through the link or resolved.
fn from_repo<'a>(packages: &'a [&'a str]) -> Patched<'a> {
    Patched {
        packages,
        under: vec![base().join("zonal"), repo_root()],
    }
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
    let out = build_and_run(
        "patch-both",
        &patch,
        from_repo(&["rayon", "rayon-core"]),
        &[],
    );
    assert_ran_on_zonal(&out);
}

#[test]
fn the_readmes_path_patch_without_its_rayon_line_runs_real_rayon_on_zonal() {
    let patch: String = readme_block("patch-path")
        .lines()
        .filter(|l| !l.starts_with("rayon = "))
        .map(|l| format!("{l}\n"))
        .collect();
    let out = build_and_run("patch-core-only", &patch, from_repo(&["rayon-core"]), &[]);
    assert_ran_on_zonal(&out);
}

#[test]
fn the_readmes_git_patch_runs_the_tree_on_zonal() {
    let url = "https://github.com/zonal-rs/zonal";
    let patch = readme_block("patch-git");
    assert!(patch.contains(&format!("git = \"{url}\"")), "{patch}");
    let base = base();
    let gitconfig = base.join("gitconfig");
    std::fs::write(
        &gitconfig,
        format!(
            "[url \"file://{}\"]\n\tinsteadOf = {url}\n[protocol \"file\"]\n\tallow = always\n\
             [safe]\n\tdirectory = *\n",
            repo_root().display()
        ),
    )
    .unwrap();
    // A CARGO_HOME of its own for the git cache, the registry (and config) the real one's.
    let real_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    let home = base.join("cargo-home");
    std::fs::create_dir_all(&home).unwrap();
    for entry in ["registry", "config.toml", "config", "credentials.toml"] {
        let real = real_home.join(entry);
        let link = home.join(entry);
        if real.exists() && std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(&real, &link).unwrap();
        }
    }
    let env = [
        ("CARGO_HOME".to_owned(), home.clone()),
        (
            "CARGO_NET_GIT_FETCH_WITH_CLI".to_owned(),
            PathBuf::from("true"),
        ),
        ("GIT_CONFIG_GLOBAL".to_owned(), gitconfig),
        ("GIT_CONFIG_NOSYSTEM".to_owned(), PathBuf::from("1")),
    ];
    let patched = Patched {
        packages: &["rayon", "rayon-core"],
        under: vec![home.join("git").join("checkouts")],
    };
    let out = build_and_run("patch-git", &patch, patched, &env);
    assert_ran_on_zonal(&out);
}
