//! The layering of the library crates, read from their sources: every `use crate::…`,
//! `crate::…` and `super::…` path (grouped imports expanded; a `super::` path taken from
//! the importing file's module) names a file (module) of its crate — the file
//! that defines the item, following `use` re-exports (`crate::ThreadPool` through `lib.rs`,
//! `crate::balance::IdleSignal` through `balance/mod.rs`); those names are the edges of the
//! crate's file graph, whose strongly connected components are the files that import each
//! other in a loop.
//!
//! - zonal-runtime: one core, features on top (as rayon-core). The loops allowed are one of
//!   at most six files, all of them [`RUNTIME_CORE`] files, and an async task's memory and
//!   its views ([`RUNTIME_TASK`], files of `async_task/` only); no core file imports a
//!   feature or a file above the features ([`RUNTIME_FEATURES`]: the pool module, which holds
//!   `ThreadPool`'s methods, the builder, the global pool, the free functions). `lib.rs` is
//!   above everything and not a node of the graph.
//! - zonal-policy: no loop at all.
//!
//! And features are code over the core's interface (so the core can be read and changed
//! alone): the core's types (`Registry`, `WorkerThread`) have inherent `impl` blocks in
//! core files only, and `ThreadPool` in the pool module only (`pool.rs` and its children),
//! read from the sources too.
//!
//! What is not read: `self::` and bare child paths (a module's own children: a parent uses
//! its children by design, so only a child's imports of its parent and siblings are
//! edges), comments, string and char literals, and the bodies of test-only inline modules
//! (`#[cfg(test)] mod … { … }`, `#[cfg(all(test, …))]` too: unit tests may use anything).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The runtime's core: the files that may import each other in a loop (registry, worker
/// loop, jobs, latches, sleep, queues and their push-and-wake functions, the task and its
/// metadata). Paths relative to
/// `crates/runtime/src`. (`sleep/mod.rs` imports no core file: it is not in the loop.)
const RUNTIME_CORE: &[&str] = &[
    "registry.rs",
    "worker.rs",
    "job.rs",
    "latch.rs",
    "sleep/mod.rs",
    "queues/mod.rs",
    // The one push-and-wake function of each queue kind (`impl Registry`, `impl
    // WorkerThread`): the only code that can push on the pool's queues.
    "queues/push.rs",
    "task_meta.rs",
    // The steal walk is the worker loop's search (`WorkerThread::steal`): only the worker
    // loop calls it, when its own queues and its injectors are empty, and it reads nothing
    // but the core's state (the registry's queues, the worker's counters and epoch). It is
    // core machinery, not a feature built over the core; it imports no feature, and as the
    // loop calls it as a method (no `crate::` path), it stays out of the loop's files.
    "steal/mod.rs",
    // Job boundaries (`impl WorkerThread`): where the worker loop and `join` take the tasks
    // addressed to the worker; it reads the worker's own queues and nothing else.
    "boundary.rs",
];

/// The runtime's features, built over the core's interface: a core file imports none of
/// them, nor the files above the features. A name ending in `/` is a directory.
const RUNTIME_FEATURES: &[&str] = &[
    "scope.rs",
    "scope_fifo.rs",
    "spawn.rs",
    "fifo.rs",
    "broadcast.rs",
    "async_task/",
    "balance/",
    "control/",
    "parallel.rs",
    "yield_now.rs",
    "join.rs",
    "route.rs",
    "enter.rs",
    "memory.rs",
    // Above the features: the pool and its handles, building, the global pool.
    "pool.rs",
    "pool/",
    "handle.rs",
    "builder.rs",
    "construct.rs",
    "thread_builder.rs",
    "global.rs",
    "free.rs",
    "task.rs",
];

/// An async task's memory and its three views, the one other loop allowed: `raw.rs` (the
/// task's allocation: its header, future and output) builds the task's wakers from
/// `waker.rs`'s vtable, stores the handle's waker and its error (`join_handle.rs`) and
/// removes the task from the pool's list of live tasks (`owned.rs`, through
/// `async_task/mod.rs`) when it ends; each of the three reads and releases the header
/// `raw.rs` defines (`Header`, `drop_ref`; a wake re-queues through `raw::requeue`). One
/// protocol — the reference count and state word of one allocation — split by who holds a
/// reference (the queue, a waker, the handle, the pool's list), as tokio's `runtime/task`
/// (`raw.rs`, `harness.rs`, `waker.rs`, `join.rs`) is. Nothing outside `async_task/` is in
/// it.
const RUNTIME_TASK: &[&str] = &[
    "async_task/raw.rs",
    "async_task/waker.rs",
    "async_task/join_handle.rs",
    "async_task/owned.rs",
];

/// The pool module: every method of `ThreadPool` is implemented in it (one place to read
/// the pool's whole API). A name ending in `/` is a directory.
const RUNTIME_POOL: &[&str] = &["pool.rs", "pool/"];

/// The files (modules) of one crate and the `crate::` edges between them.
#[derive(Debug, Default)]
struct Graph {
    /// File (relative to `src/`, `/`-separated) → the module path it defines.
    files: BTreeMap<String, Vec<String>>,
    /// Importing file → imported file → the paths (as written, joined) that name it.
    edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

// --- Reading a source file -------------------------------------------------------------

/// The source with comments, string and char literals blanked out (replaced by spaces,
/// newlines kept), so that only code is read.
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == b'/' && next == Some(b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && next == Some(b'*') {
            let mut depth = 0usize;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == b'r'
            && (next == Some(b'"') || next == Some(b'#'))
            && (i == 0 || !is_ident(b[i - 1]))
            && raw_string_len(&b[i..]).is_some()
        {
            let len = raw_string_len(&b[i..]).unwrap_or(1);
            for &ch in &b[i..i + len] {
                blank(&mut out, ch);
            }
            i += len;
        } else if c == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' && i + 1 < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                blank(&mut out, b[i]);
                i += 1;
            }
            if i < b.len() {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a): only the former is blanked.
            let len = char_literal_len(&b[i..]);
            match len {
                Some(len) => {
                    out.extend(std::iter::repeat_n(b' ', len));
                    i += len;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The length of a raw string literal `r"…"` / `r#"…"#` starting at `b[0] == b'r'`.
fn raw_string_len(b: &[u8]) -> Option<usize> {
    let hashes = b[1..].iter().take_while(|&&c| c == b'#').count();
    if b.get(1 + hashes) != Some(&b'"') {
        return None;
    }
    let body = 2 + hashes;
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    b[body..]
        .windows(close.len())
        .position(|w| w == close.as_slice())
        .map(|p| body + p + close.len())
}

/// The length of a char literal starting at `b[0] == b'\''`, or `None` for a lifetime.
fn char_literal_len(b: &[u8]) -> Option<usize> {
    if b.get(1) == Some(&b'\\') {
        let end = b[2..].iter().position(|&c| c == b'\'')?;
        return Some(2 + end + 1);
    }
    // One (possibly multi-byte) character, then the closing quote.
    let s = std::str::from_utf8(&b[1..b.len().min(6)])
        .ok()
        .or_else(|| {
            (2..=5)
                .rev()
                .find_map(|n| std::str::from_utf8(&b[1..b.len().min(n)]).ok())
        })?;
    let ch = s.chars().next()?;
    let after = 1 + ch.len_utf8();
    (b.get(after) == Some(&b'\'')).then_some(after + 1)
}

/// The length of a bracketed group starting at `s[0]` (`open`), or the rest of `s`.
fn group_len(s: &str, open: char, close: char) -> usize {
    let mut depth = 0usize;
    for (k, ch) in s.char_indices() {
        if ch == open {
            depth += 1;
        } else if ch == close {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return k + 1;
            }
        }
    }
    s.len()
}

/// Whether a `cfg(…)` predicate holds only in tests: it names `test`, not negated.
fn test_only(predicate: &str) -> bool {
    let words: Vec<&str> = predicate
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    words.contains(&"test") && !predicate.replace(' ', "").contains("not(test")
}

/// The source without the bodies of inline test modules (`#[cfg(test)] mod name { … }`,
/// `#[cfg(all(test, …))]` too, other attributes between), from stripped code.
fn drop_test_modules(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(") {
        out.push_str(&rest[..at]);
        let attr_len = group_len(&rest[at + 1..], '[', ']') + 1;
        let attr = &rest[at..at + attr_len];
        let mut after = &rest[at + attr_len..];
        // Other attributes of the same item.
        loop {
            let t = after.trim_start();
            if !t.starts_with("#[") {
                break;
            }
            let skip = after.len() - t.len() + 1 + group_len(&t[1..], '[', ']');
            after = &after[skip..];
        }
        let t = after.trim_start();
        let head_len = t.find(['{', ';']).unwrap_or(t.len());
        let is_inline_mod =
            (t.starts_with("mod ") || t.starts_with("pub mod ")) && t[head_len..].starts_with('{');
        if !test_only(attr) || !is_inline_mod {
            out.push_str(attr);
            rest = &rest[at + attr_len..];
            continue;
        }
        let open = after.len() - t.len() + head_len;
        let end = open + group_len(&after[open..], '{', '}');
        // Keep the line count (for nothing but readability of debugging output).
        out.extend(after[..end].chars().filter(|&c| c == '\n'));
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Every `crate::…` path of the (stripped) code, grouped imports expanded:
/// `use crate::{a, b::{c, d as e}}` gives `[a]`, `[b, c]`, `[b, d]`. `self` in a group names
/// its prefix; `*` is dropped (the prefix names the module).
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    keyword_paths(code, "crate")
}

/// Every `keyword::…` path of the (stripped) code (`crate` or `super`), as
/// [`crate_paths`] reads them; for `super`, a further leading `super` stays in the path
/// (`super::super::a` gives `[super, a]`).
fn keyword_paths(code: &str, keyword: &str) -> Vec<Vec<String>> {
    let b = code.as_bytes();
    let mut paths = Vec::new();
    let mut from = 0;
    while let Some(p) = code[from..].find(keyword) {
        let at = from + p;
        from = at + keyword.len();
        let before_ok = at == 0 || !(is_ident(b[at - 1]) || b[at - 1] == b'$' || b[at - 1] == b':');
        let after_ok = b.get(from).is_none_or(|&c| !is_ident(c));
        let rest = code[from..].trim_start();
        if !before_ok || !after_ok || !rest.starts_with("::") {
            continue;
        }
        let start = code.len() - rest.len() + 2;
        let mut parser = PathParser {
            s: code.as_bytes(),
            i: start,
            aliases: Vec::new(),
        };
        parser.tree(&mut Vec::new(), &mut paths);
    }
    paths
}

/// The absolute module path of each `super::…` path of the (stripped) code of the file of
/// `module` (`a/b.rs`'s `super::c::X` is `[a, c, X]`); a path that climbs above the crate
/// root is left out.
fn super_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for path in keyword_paths(code, "super") {
        let ups = 1 + path.iter().take_while(|s| *s == "super").count();
        if ups > module.len() {
            continue;
        }
        let mut abs = module[..module.len() - ups].to_vec();
        abs.extend(path.into_iter().skip(ups - 1));
        out.push(abs);
    }
    out
}

struct PathParser<'a> {
    s: &'a [u8],
    i: usize,
    /// `(index in the output, alias)` for each `path as alias`.
    aliases: Vec<(usize, String)>,
}

impl PathParser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn ident(&mut self) -> Option<String> {
        self.skip_ws();
        let start = self.i;
        while self.i < self.s.len() && (is_ident(self.s[self.i]) || self.s[self.i] == b'#') {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    fn eat(&mut self, tok: &str) -> bool {
        self.skip_ws();
        if self.s[self.i..].starts_with(tok.as_bytes()) {
            self.i += tok.len();
            true
        } else {
            false
        }
    }

    /// A use tree after `prefix::`: `a::b`, `{x, y::z}`, `*`, `a as b`.
    fn tree(&mut self, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        if self.eat("{") {
            loop {
                if self.eat("}") {
                    return;
                }
                let depth = prefix.len();
                self.tree(prefix, out);
                prefix.truncate(depth);
                if !self.eat(",") {
                    self.eat("}");
                    return;
                }
            }
        }
        if self.eat("*") {
            out.push(prefix.clone());
            return;
        }
        let Some(id) = self.ident() else {
            if !prefix.is_empty() {
                out.push(prefix.clone());
            }
            return;
        };
        if id != "self" {
            prefix.push(id);
        }
        // `::` followed by more, but not a turbofish `::<`.
        let save = self.i;
        if self.eat("::") && !self.eat("<") {
            self.tree(prefix, out);
            return;
        }
        self.i = save;
        if self.eat("as") {
            if let Some(alias) = self.ident() {
                self.aliases.push((out.len(), alias));
            }
        }
        out.push(prefix.clone());
    }
}

// --- The crate's module tree and file graph --------------------------------------------

/// The module path a file defines (`lib.rs` → `[]`, `a/mod.rs` → `[a]`, `a/b.rs` → `[a, b]`).
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.split('/').map(str::to_owned).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem.to_owned());
    }
    parts
}

/// A file's `use` items, which re-export what they name under their own module:
/// (module, name) → the absolute path it stands for.
type Reexports = BTreeMap<(Vec<String>, String), Vec<String>>;

/// The file a path names: the longest prefix of it that is a file's module, followed
/// through that module's `use` items (`pub use load::IdleSignal;` in `balance/mod.rs` makes
/// `crate::balance::IdleSignal` name `balance/load.rs`; `lib.rs`'s `pub use pool::ThreadPool`
/// makes `crate::ThreadPool` name `pool.rs`).
fn resolve(
    path: &[String],
    modules: &BTreeMap<Vec<String>, String>,
    reexports: &Reexports,
) -> Option<String> {
    let mut path = path.to_vec();
    for _ in 0..16 {
        let len = (0..=path.len())
            .rev()
            .find(|&len| modules.contains_key(&path[..len]))?;
        let Some(next) = path
            .get(len)
            .and_then(|name| reexports.get(&(path[..len].to_vec(), name.clone())))
        else {
            return modules.get(&path[..len]).cloned();
        };
        let mut target = next.clone();
        target.extend_from_slice(&path[len + 1..]);
        if target == path {
            break;
        }
        path = target;
    }
    let len = (0..=path.len())
        .rev()
        .find(|&len| modules.contains_key(&path[..len]))?;
    modules.get(&path[..len]).cloned()
}

/// The `use` items of the (stripped) code of the file of `module`: each imported name →
/// the absolute path it names (`crate::`, `self::`, `super::` and child-module paths;
/// other crates' paths are left out).
fn use_items(
    module: &[String],
    code: &str,
    modules: &BTreeMap<Vec<String>, String>,
    out: &mut Reexports,
) {
    let b = code.as_bytes();
    let mut from = 0;
    while let Some(p) = code[from..].find("use") {
        let at = from + p;
        from = at + 3;
        let before_ok = at == 0 || !is_ident(b[at - 1]);
        let after_ok = b.get(at + 3).is_some_and(|c| c.is_ascii_whitespace());
        if !before_ok || !after_ok {
            continue;
        }
        let mut parser = PathParser {
            s: b,
            i: at + 3,
            aliases: Vec::new(),
        };
        let mut paths = Vec::new();
        parser.tree(&mut Vec::new(), &mut paths);
        let aliases: BTreeMap<usize, String> = parser.aliases.into_iter().collect();
        for (k, p) in paths.into_iter().enumerate() {
            let Some(first) = p.first() else { continue };
            let mut abs: Vec<String> = match first.as_str() {
                "crate" => Vec::new(),
                "self" => module.to_vec(),
                "super" => module[..module.len().saturating_sub(1)].to_vec(),
                _ => {
                    let mut child = module.to_vec();
                    child.push(first.clone());
                    if !modules.contains_key(&child) {
                        continue;
                    }
                    module.to_vec()
                }
            };
            let rest = if matches!(first.as_str(), "crate" | "self" | "super") {
                &p[1..]
            } else {
                &p[..]
            };
            abs.extend(rest.iter().filter(|s| *s != "super").cloned());
            let Some(name) = aliases.get(&k).or(abs.last()).cloned() else {
                continue;
            };
            if name != "self" {
                out.insert((module.to_vec(), name), abs);
            }
        }
    }
}

fn rs_files(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rs_files(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(root).unwrap_or(&path).to_path_buf());
        }
    }
}

/// The file graph of `crates/<name>/src` (the files read from disk).
fn crate_graph(name: &str) -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates")
        .join(name)
        .join("src");
    let mut files = Vec::new();
    rs_files(&src, &src, &mut files);
    let sources: BTreeMap<String, String> = files
        .iter()
        .map(|rel| {
            let key = rel.to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(src.join(rel)).unwrap_or_default();
            (key, text)
        })
        .collect();
    graph_of(&sources)
}

/// The file graph of a crate given as file (relative to `src/`) → source text.
/// The files `from` imports from, in order (none if it imports nothing).
fn targets(graph: &Graph, from: &str) -> Vec<String> {
    graph
        .edges
        .get(from)
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default()
}

fn graph_of(sources: &BTreeMap<String, String>) -> Graph {
    let mut graph = Graph::default();
    let mut modules = BTreeMap::new();
    for rel in sources.keys() {
        let module = module_of(rel);
        graph.files.insert(rel.clone(), module.clone());
        modules.insert(module, rel.clone());
    }
    let mut reexports = Reexports::new();
    for (rel, text) in sources {
        use_items(
            &module_of(rel),
            &drop_test_modules(&strip(text)),
            &modules,
            &mut reexports,
        );
    }
    for (rel, text) in sources {
        let code = drop_test_modules(&strip(text));
        let module = module_of(rel);
        let crate_ = crate_paths(&code).into_iter().map(|p| ("crate", p));
        let super_ = super_paths(&module, &code)
            .into_iter()
            .map(|p| ("super", p));
        for (how, path) in crate_.chain(super_) {
            let Some(to) = resolve(&path, &modules, &reexports) else {
                continue;
            };
            if &to == rel || to == "lib.rs" {
                continue;
            }
            graph
                .edges
                .entry(rel.clone())
                .or_default()
                .entry(to)
                .or_default()
                .insert(match how {
                    "crate" => format!("crate::{}", path.join("::")),
                    _ => format!("super:: (crate::{})", path.join("::")),
                });
        }
    }
    graph
}

/// The strongly connected components of the graph with more than one file (Tarjan).
fn cycles(graph: &Graph) -> Vec<BTreeSet<String>> {
    struct Tarjan<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        next: usize,
        out: Vec<BTreeSet<String>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g str) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            self.on_stack.insert(v);
            if let Some(targets) = self.graph.edges.get(v) {
                for w in targets.keys() {
                    let w = w.as_str();
                    if !self.index.contains_key(w) {
                        self.visit(w);
                        let low = self.low[v].min(self.low[w]);
                        self.low.insert(v, low);
                    } else if self.on_stack.contains(w) {
                        let low = self.low[v].min(self.index[w]);
                        self.low.insert(v, low);
                    }
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.insert(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.out.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.files.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

/// The imports among the files of one component, for a failure message.
fn describe(graph: &Graph, component: &BTreeSet<String>) -> String {
    let mut s = String::new();
    for from in component {
        for (to, paths) in graph.edges.get(from).into_iter().flatten() {
            if component.contains(to) {
                let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
                let _ = writeln!(s, "    {from} -> {to}: {}", paths.join(", "));
            }
        }
    }
    s
}

fn in_list(file: &str, list: &[&str]) -> bool {
    list.iter().any(|entry| {
        if entry.ends_with('/') {
            file.starts_with(entry)
        } else {
            file == *entry
        }
    })
}

// --- The checks --------------------------------------------------------------------------

/// The problems of the runtime's layering, one line per offending loop or import.
fn runtime_problems(graph: &Graph) -> Vec<String> {
    let mut problems = Vec::new();
    let loops = cycles(graph);
    let core_loops = loops
        .iter()
        .filter(|c| c.iter().all(|f| in_list(f, RUNTIME_CORE)))
        .count();
    if core_loops > 1 {
        problems.push(format!(
            "{core_loops} import loops among the core's files (at most one)"
        ));
    }
    for component in &loops {
        if component.iter().all(|f| in_list(f, RUNTIME_TASK)) {
            continue;
        }
        let outside: Vec<&String> = component
            .iter()
            .filter(|f| !in_list(f, RUNTIME_CORE))
            .collect();
        if component.len() > 6 || !outside.is_empty() {
            problems.push(format!(
                "a loop of {} files ({} outside the core: {outside:?}; the only other loop \
                 allowed is an async task's, {RUNTIME_TASK:?}):\n{}",
                component.len(),
                outside.len(),
                describe(graph, component)
            ));
        }
    }
    for core in RUNTIME_CORE {
        for (to, paths) in graph.edges.get(*core).into_iter().flatten() {
            if in_list(to, RUNTIME_FEATURES) {
                let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
                problems.push(format!(
                    "core {core} imports feature {to}: {}",
                    paths.join(", ")
                ));
            }
        }
    }
    problems
}

fn summary(graph: &Graph) -> String {
    let imports: usize = graph
        .edges
        .values()
        .map(|t| t.values().map(BTreeSet::len).sum::<usize>())
        .sum();
    let mut s = format!(
        "{} files, {imports} distinct crate:: paths\n",
        graph.files.len()
    );
    for component in cycles(graph) {
        let _ = writeln!(s, "  loop of {}: {component:?}", component.len());
    }
    s
}

#[test]
fn runtime_is_one_core_with_features_on_top() {
    let graph = crate_graph("runtime");
    assert!(
        graph.files.contains_key("lib.rs"),
        "crates/runtime/src not read"
    );
    let problems = runtime_problems(&graph);
    assert!(
        problems.is_empty(),
        "zonal-runtime's layering: {}\n{}",
        summary(&graph),
        problems.join("\n")
    );
}

/// The types of the inherent `impl` blocks of a file's code (comments and strings blanked
/// out): `impl Registry {`, `impl<'a> WorkerThread<'a> where … {`, `impl crate::pool::ThreadPool
/// {` give `Registry`, `WorkerThread`, `ThreadPool`. Trait impls (`impl Trait for Type`) are
/// not inherent: a feature may implement its own trait for a core type.
fn inherent_impls(code: &str) -> Vec<String> {
    /// The length of a `<…>` group at `s[0]`, `->` not closing it.
    fn generics_len(s: &str) -> usize {
        let b = s.as_bytes();
        let mut depth = 0usize;
        for (k, &c) in b.iter().enumerate() {
            if c == b'<' {
                depth += 1;
            } else if c == b'>' && (k == 0 || b[k - 1] != b'-') {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return k + 1;
                }
            }
        }
        s.len()
    }
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(k) = code[i..].find("impl") {
        let at = i + k;
        i = at + 4;
        if (at > 0 && is_ident(b[at - 1])) || b.get(i).is_some_and(|&c| is_ident(c)) {
            continue;
        }
        let mut rest = code[i..].trim_start();
        if rest.starts_with('<') {
            rest = rest[generics_len(rest)..].trim_start();
        }
        // The path of the type (or of the trait, when `for` follows).
        let path_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let name = rest[..path_len]
            .rsplit("::")
            .next()
            .unwrap_or("")
            .to_owned();
        rest = rest[path_len..].trim_start();
        if rest.starts_with('<') {
            rest = rest[generics_len(rest)..].trim_start();
        }
        // `impl Trait for Type` continues with `for`; an inherent impl with `{` or `where`.
        let inherent = rest.starts_with('{')
            || (rest.starts_with("where") && !rest[5..].starts_with(|c: char| is_ident(c as u8)));
        if inherent && !name.is_empty() {
            out.push(name);
        }
    }
    out
}

/// The runtime's sources as (file relative to `src/`, code with comments and strings
/// blanked out).
fn runtime_code() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/runtime/src");
    let mut files = Vec::new();
    rs_files(&src, &src, &mut files);
    files.sort();
    files
        .iter()
        .map(|rel| {
            let text = std::fs::read_to_string(src.join(rel)).unwrap_or_default();
            (rel.to_string_lossy().replace('\\', "/"), strip(&text))
        })
        .collect()
}

/// The inherent impls of the core's types and of the pool outside their files.
fn misplaced_impls(sources: &[(String, String)]) -> Vec<String> {
    let mut offenders = Vec::new();
    for (file, code) in sources {
        for ty in inherent_impls(code) {
            let home: Option<(&[&str], &str)> = match ty.as_str() {
                "Registry" | "WorkerThread" => Some((RUNTIME_CORE, "a core file")),
                "ThreadPool" => Some((RUNTIME_POOL, "the pool module")),
                _ => None,
            };
            if let Some((files, place)) = home {
                if !in_list(file, files) {
                    offenders.push(format!("{file}: impl {ty} (belongs in {place})"));
                }
            }
        }
    }
    offenders
}

/// Features are code over the core's interface (free functions taking a
/// `&Registry` or a `&WorkerThread`, or methods of their own types), not methods added to
/// the core's types; and every `ThreadPool` method lives in the pool module.
#[test]
fn core_types_are_implemented_in_the_core_and_the_pool_in_its_module() {
    let sources = runtime_code();
    let impls: Vec<(&str, String)> = sources
        .iter()
        .flat_map(|(f, code)| {
            inherent_impls(code)
                .into_iter()
                .map(move |t| (f.as_str(), t))
        })
        .collect();
    // The reader sees the real impls (the check is not vacuous).
    for (file, ty) in [
        ("registry.rs", "Registry"),
        ("worker.rs", "WorkerThread"),
        ("pool.rs", "ThreadPool"),
    ] {
        assert!(
            impls.iter().any(|(f, t)| *f == file && t == ty),
            "no impl {ty} found in {file}: {impls:?}"
        );
    }
    let offenders = misplaced_impls(&sources);
    assert!(
        offenders.is_empty(),
        "impls of the core's types outside the core, or of ThreadPool outside the pool \
         module:\n{}",
        offenders.join("\n")
    );
}

/// Every push on the pool's queues goes through the core's push-and-wake function of its
/// queue kind (`crates/runtime/src/queues/push.rs`): the queue types' pushing methods are
/// private to `queues` (so the compiler refuses a push anywhere else), no other file holds
/// a crossbeam queue of tasks that workers search, and only `queues/push.rs` calls the sleep
/// protocol's `push_and_wake`.
#[test]
fn every_push_goes_through_the_cores_push_and_wake_function() {
    let code = runtime_code();
    let file = |name: &str| {
        &code
            .iter()
            .find(|(f, _)| f == name)
            .unwrap_or_else(|| panic!("crates/runtime/src/{name} not read"))
            .1
    };
    let queues = file("queues/mod.rs");
    // The pool's queues (not `FifoQueue`: the jobs behind FIFO proxies, whose proxy is
    // what is queued and pushed through the core).
    let mut pushes = 0;
    for ty in ["AwayQueue", "Deque", "SharedQueue"] {
        let at = queues
            .find(&format!("impl {ty} {{"))
            .unwrap_or_else(|| panic!("queues/mod.rs has no impl {ty}"));
        let body_at = at + queues[at..].find('{').expect("an impl body");
        let body = &queues[body_at..body_at + group_len(&queues[body_at..], '{', '}')];
        for needle in ["fn push(", "fn put_back("] {
            pushes += body.matches(needle).count();
            assert!(
                !body.contains(&format!("pub(crate) {needle}"))
                    && !body.contains(&format!("pub {needle}")),
                "{ty}'s {needle} is visible outside queues/"
            );
        }
    }
    assert_eq!(
        pushes, 4,
        "AwayQueue's push and put_back, Deque's and SharedQueue's push"
    );
    let mut problems = Vec::new();
    for (f, src) in &code {
        if f != "queues/push.rs" && !f.starts_with("sleep/") && src.contains("push_and_wake(") {
            problems.push(format!("{f} calls push_and_wake (only queues/push.rs may)"));
        }
        // Queues of tasks workers search are the core's types; `worker.rs`'s batch staging
        // queue and `fifo.rs`'s jobs behind their proxies are private to one worker.
        let raw = src.matches("Injector<Task>").count() + src.matches("Worker<Task>").count();
        let allowed = match f.as_str() {
            "queues/mod.rs" => usize::MAX,
            "worker.rs" => 1,
            _ => 0,
        };
        if raw > allowed {
            problems.push(format!("{f} holds {raw} raw crossbeam queue(s) of tasks"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn policy_has_no_import_loop() {
    let graph = crate_graph("policy");
    assert!(
        graph.files.contains_key("lib.rs"),
        "crates/policy/src not read"
    );
    let loops = cycles(&graph);
    let text: Vec<String> = loops
        .iter()
        .map(|c| format!("a loop of {} files:\n{}", c.len(), describe(&graph, c)))
        .collect();
    assert!(
        loops.is_empty(),
        "zonal-policy's import loops:\n{}",
        text.join("\n")
    );
}

/// The policy crate's layers: `config.rs` a leaf, each policy a leaf above the
/// Linux walk (no policy file imports another's), the catalogue (`policies.rs`) on top.
#[test]
fn policy_config_is_a_leaf_and_the_catalogue_is_on_top() {
    let graph = crate_graph("policy");
    let imports = |file: &str| -> Vec<&str> {
        graph
            .edges
            .get(file)
            .map(|e| e.keys().map(String::as_str).collect())
            .unwrap_or_default()
    };
    assert!(
        imports("config.rs").is_empty(),
        "config.rs imports {:?}",
        imports("config.rs")
    );
    // The graph sees real imports (the checks below are not vacuous).
    assert!(imports("policies.rs").contains(&"config.rs"));
    let policies = [
        "thread_aware",
        "numalb",
        "average_weight",
        "unrestricted",
        "no_policy",
    ];
    for (from, edges) in &graph.edges {
        for p in policies {
            let own =
                from == &format!("policies/{p}.rs") || from.starts_with(&format!("policies/{p}/"));
            let theirs = edges.keys().any(|to| {
                to == &format!("policies/{p}.rs") || to.starts_with(&format!("policies/{p}/"))
            });
            assert!(own || !theirs, "{from} imports policies/{p}");
        }
        let test = from.starts_with("policies/test") || from.ends_with("/test.rs");
        if from != "policies.rs" && from != "lib.rs" && !test {
            assert!(
                !edges.contains_key("policies.rs"),
                "{from} imports the catalogue (policies.rs), which must be on top"
            );
        }
    }
}

// --- The reader's own tests --------------------------------------------------------------

fn paths_of(code: &str) -> Vec<String> {
    crate_paths(&drop_test_modules(&strip(code)))
        .into_iter()
        .map(|p| p.join("::"))
        .collect()
}

#[test]
fn reads_plain_grouped_and_nested_paths() {
    let code = "use crate::registry::Registry;\n\
                use crate::{job::{JobRef, StackJob as S}, latch, sleep::*};\n\
                fn f() { crate::worker::WorkerThread::current(); let x: crate::task::Meta; }";
    assert_eq!(
        paths_of(code),
        [
            "registry::Registry",
            "job::JobRef",
            "job::StackJob",
            "latch",
            "sleep",
            "worker::WorkerThread::current",
            "task::Meta"
        ]
    );
}

#[test]
fn reads_self_in_groups_and_stops_at_turbofish() {
    assert_eq!(
        paths_of("use crate::steal::{self, Thief};"),
        ["steal", "steal::Thief"]
    );
    assert_eq!(paths_of("crate::job::make::<u8>(x)"), ["job::make"]);
}

#[test]
fn skips_comments_strings_macros_and_test_modules() {
    let code = "// use crate::a::B;\n/* crate::c /* nested crate::d */ */\n\
                let s = \"crate::e\"; let r = r#\"crate::f\"#; let c = '\"'; let l: &'static str;\n\
                macro_rules! m { () => { $crate::g::H } }\n\
                pub(crate) fn ok() {}\n\
                #[cfg(test)]\nmod tests { use crate::pool::ThreadPool; fn t() { { } } }\n\
                #[cfg(all(test, target_os = \"linux\"))]\n#[allow(unused)]\nmod more { use crate::x::Y; }\n\
                #[cfg(not(test))]\nmod real { use crate::real::R; }\n\
                use crate::kept::K;";
    assert_eq!(paths_of(code), ["real::R", "kept::K"]);
}

#[test]
fn maps_paths_to_files_and_finds_loops() {
    let sources: BTreeMap<String, String> = [
        ("lib.rs", "mod a; mod b; pub use b::Thing;"),
        ("a/mod.rs", "use crate::b::inner::X; mod c;"),
        ("a/c.rs", "use crate::Thing;"),
        ("b.rs", "use crate::a::c::Y; fn f() { crate::a::Z; }"),
        ("d.rs", "use crate::a::Q;"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let graph = graph_of(&sources);
    let to = |from: &str| targets(&graph, from);
    assert_eq!(to("a/mod.rs"), ["b.rs"]);
    assert_eq!(to("a/c.rs"), ["b.rs"], "a root re-export names its file");
    assert_eq!(to("b.rs"), ["a/c.rs", "a/mod.rs"]);
    let loops = cycles(&graph);
    assert_eq!(loops.len(), 1);
    let files: Vec<&str> = loops[0].iter().map(String::as_str).collect();
    assert_eq!(files, ["a/c.rs", "a/mod.rs", "b.rs"]);
    assert!(describe(&graph, &loops[0]).contains("b.rs -> a/c.rs: crate::a::c::Y"));
}

#[test]
fn reads_super_paths_from_the_files_module() {
    let sources: BTreeMap<String, String> = [
        ("lib.rs", "mod p;"),
        ("p/mod.rs", "mod era; mod groups; pub(super) fn margin() {}"),
        (
            "p/era.rs",
            "use super::groups::GroupStat; fn f() { super::margin(); }",
        ),
        (
            "p/groups.rs",
            "pub(super) struct GroupStat; fn g() { super::era::single(); }",
        ),
        (
            "p/groups/test.rs",
            "use super::super::era::X; use super::*;",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let graph = graph_of(&sources);
    let to = |from: &str| targets(&graph, from);
    assert_eq!(to("p/era.rs"), ["p/groups.rs", "p/mod.rs"]);
    assert_eq!(to("p/groups.rs"), ["p/era.rs"], "`pub(super)` is no path");
    assert_eq!(to("p/groups/test.rs"), ["p/era.rs", "p/groups.rs"]);
    let loops = cycles(&graph);
    assert_eq!(loops.len(), 1);
    let files: Vec<&str> = loops[0].iter().map(String::as_str).collect();
    assert_eq!(files, ["p/era.rs", "p/groups.rs"]);
    assert!(
        describe(&graph, &loops[0])
            .contains("p/groups.rs -> p/era.rs: super:: (crate::p::era::single)"),
        "{}",
        describe(&graph, &loops[0])
    );
}

#[test]
fn runtime_check_reports_loops_outside_the_core_and_core_to_feature_imports() {
    let sources: BTreeMap<String, String> = [
        ("lib.rs", ""),
        ("registry.rs", "use crate::worker::W; use crate::scope::S;"),
        ("worker.rs", "use crate::registry::R;"),
        ("scope.rs", "use crate::registry::R;"),
        ("spawn.rs", "use crate::fifo::F;"),
        ("fifo.rs", "use crate::spawn::S;"),
        ("job.rs", "use crate::latch::L;"),
        ("latch.rs", "use crate::job::J;"),
        ("queues/mod.rs", "use crate::task_meta::T;"),
        ("task_meta.rs", "use crate::queues::Q;"),
        // The async task's loop is allowed, read through `super::` paths.
        ("async_task/mod.rs", "mod raw; mod waker;"),
        ("async_task/raw.rs", "use super::waker;"),
        ("async_task/waker.rs", "use super::raw::Header;"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let problems = runtime_problems(&graph_of(&sources));
    let text = problems.join("\n");
    assert!(
        text.contains("2 import loops among the core's files"),
        "{text}"
    );
    assert!(text.contains("outside the core"), "{text}");
    assert!(!text.contains("async_task/raw.rs ->"), "{text}");
    // Two core loops, the loop through a feature (scope.rs), the feature loop, the import.
    assert_eq!(problems.len(), 4, "{text}");
    assert!(
        text.contains("core registry.rs imports feature scope.rs"),
        "{text}"
    );
}

#[test]
fn reads_inherent_impls_and_reports_misplaced_ones() {
    let code =
        "impl Registry { }\nimpl<'a, F: Fn() -> u8> crate::worker::WorkerThread where F: Send {}\n\
                impl Drop for Registry {}\nimpl<T> Queues for WorkerThread where T: Copy {}\n\
                impl ThreadPool<u8> {}\nfn simple() {}\nimpl Route<'_> {}";
    assert_eq!(
        inherent_impls(code),
        ["Registry", "WorkerThread", "ThreadPool", "Route"]
    );
    let sources = vec![
        ("registry.rs".to_owned(), "impl Registry {}".to_owned()),
        (
            "route.rs".to_owned(),
            "impl Registry {} impl Route {}".to_owned(),
        ),
        (
            "pool/configuration.rs".to_owned(),
            "impl ThreadPool {}".to_owned(),
        ),
        (
            "spawn.rs".to_owned(),
            strip("// impl WorkerThread {}\nimpl<'a> WorkerThread {}"),
        ),
        (
            "configuration.rs".to_owned(),
            "impl ThreadPool {}".to_owned(),
        ),
    ];
    assert_eq!(
        misplaced_impls(&sources),
        [
            "route.rs: impl Registry (belongs in a core file)",
            "spawn.rs: impl WorkerThread (belongs in a core file)",
            "configuration.rs: impl ThreadPool (belongs in the pool module)",
        ]
    );
}
