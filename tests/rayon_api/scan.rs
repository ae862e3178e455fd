//! A crate's public API, read from its sources with `syn`: the names each public module
//! declares or re-exports (globs expanded, across the crates scanned together), the methods
//! of public traits, and the inherent `pub` methods of types. Enough to compare rayon's
//! names with Zonal's; no type checking, no macro expansion (a name a macro defines is not
//! seen; none of rayon's public items are).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::{ImplItem, Item, TraitItem, UseTree, Visibility};

/// What a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Module,
    Function,
    Struct,
    Enum,
    Trait,
    TypeAlias,
    Const,
    /// A crate re-exported as a module (`pub use zonal_runtime as runtime`): not walked.
    CrateAlias,
    /// A re-export of a name the scan cannot see declared (a macro declares it).
    Item,
}

impl Kind {
    pub fn word(self) -> &'static str {
        match self {
            Kind::Module => "module",
            Kind::Function => "fn",
            Kind::Struct => "struct",
            Kind::Enum => "enum",
            Kind::Trait => "trait",
            Kind::TypeAlias => "type",
            Kind::Const => "const",
            Kind::CrateAlias => "crate",
            Kind::Item => "item",
        }
    }
}

/// Where an item is defined: crate, module path, name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DefId {
    pub krate: String,
    pub module: Vec<String>,
    pub name: String,
}

/// One module as written.
#[derive(Default, Debug)]
struct Module {
    public: bool,
    /// Items declared here: name → (kind, public, hidden, alias target ident).
    items: BTreeMap<String, Declared>,
    /// `use` declarations here: (public, name or `*`, target path).
    uses: Vec<(bool, String, Vec<String>)>,
    /// Child modules: name → public.
    children: BTreeMap<String, bool>,
}

#[derive(Clone, Debug)]
struct Declared {
    kind: Kind,
    public: bool,
    hidden: bool,
    /// For a type alias: the ident of the aliased type.
    alias_of: Option<String>,
    /// For a trait: its methods (not hidden).
    methods: BTreeSet<String>,
}

/// Several crates scanned together (re-exports may cross between them).
#[derive(Default, Debug)]
pub struct Crates {
    /// (crate, module path) → module.
    modules: BTreeMap<(String, Vec<String>), Module>,
    /// (crate, self type ident) → inherent `pub` methods, over every module of the crate.
    inherent: BTreeMap<(String, String), BTreeSet<String>>,
    /// (crate, `macro_rules!` name) → the kind of public type its expansion declares, named
    /// by its first identifier argument (`char_wise! { Chars, … }`).
    type_macros: BTreeMap<(String, String), Kind>,
}

/// The first identifier of a macro invocation's tokens, attributes (`#[doc = …]`) skipped.
fn first_ident(tokens: &proc_macro2::TokenStream) -> Option<String> {
    let mut iter = tokens.clone().into_iter().peekable();
    while let Some(t) = iter.next() {
        match t {
            proc_macro2::TokenTree::Punct(p) if p.as_char() == '#' => {
                iter.next(); // the bracketed attribute
            }
            proc_macro2::TokenTree::Ident(i) => return Some(i.to_string()),
            _ => return None,
        }
    }
    None
}

fn is_pub(v: &Visibility) -> bool {
    matches!(v, Visibility::Public(_))
}

fn hidden(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("doc")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().trim() == "hidden")
    })
}

/// Test-only and other `cfg`-gated modules are not API (`#[cfg(test)]`).
fn cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().contains("test"))
    })
}

fn last_ident(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

fn flatten_use(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten_use(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            let name = if n.ident == "self" {
                prefix.last().cloned().unwrap_or_default()
            } else {
                n.ident.to_string()
            };
            out.push((name, path));
        }
        UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            out.push((r.rename.to_string(), path));
        }
        UseTree::Glob(_) => out.push(("*".into(), prefix.clone())),
        UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix, out);
            }
        }
    }
}

impl Crates {
    /// Scans crate `krate` from its root file (`src/lib.rs`).
    pub fn add_crate(&mut self, krate: &str, root: &Path) {
        let text = std::fs::read_to_string(root)
            .unwrap_or_else(|e| panic!("read {}: {e}", root.display()));
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
        let dir = root
            .parent()
            .expect("root file in a directory")
            .to_path_buf();
        self.add_items(krate, Vec::new(), true, &file.items, &dir);
    }

    fn add_items(
        &mut self,
        krate: &str,
        path: Vec<String>,
        public: bool,
        items: &[Item],
        dir: &Path,
    ) {
        let mut m = Module {
            public,
            ..Module::default()
        };
        let mut children = Vec::new();
        for item in items {
            let (name, kind, vis, attrs, alias_of, methods) = match item {
                Item::Fn(f) => (
                    f.sig.ident.to_string(),
                    Kind::Function,
                    &f.vis,
                    &f.attrs,
                    None,
                    None,
                ),
                Item::Struct(s) => (
                    s.ident.to_string(),
                    Kind::Struct,
                    &s.vis,
                    &s.attrs,
                    None,
                    None,
                ),
                Item::Enum(e) => (
                    e.ident.to_string(),
                    Kind::Enum,
                    &e.vis,
                    &e.attrs,
                    None,
                    None,
                ),
                Item::Type(t) => (
                    t.ident.to_string(),
                    Kind::TypeAlias,
                    &t.vis,
                    &t.attrs,
                    last_ident(&t.ty),
                    None,
                ),
                Item::Const(c) => (
                    c.ident.to_string(),
                    Kind::Const,
                    &c.vis,
                    &c.attrs,
                    None,
                    None,
                ),
                Item::Trait(t) => {
                    let methods = t
                        .items
                        .iter()
                        .filter_map(|ti| match ti {
                            TraitItem::Fn(f) if !hidden(&f.attrs) => Some(f.sig.ident.to_string()),
                            _ => None,
                        })
                        .collect();
                    (
                        t.ident.to_string(),
                        Kind::Trait,
                        &t.vis,
                        &t.attrs,
                        None,
                        Some(methods),
                    )
                }
                Item::Impl(i) if i.trait_.is_none() => {
                    if let Some(ty) = last_ident(&i.self_ty) {
                        let set = self.inherent.entry((krate.to_owned(), ty)).or_default();
                        for ii in &i.items {
                            if let ImplItem::Fn(f) = ii {
                                if is_pub(&f.vis) && !hidden(&f.attrs) {
                                    set.insert(f.sig.ident.to_string());
                                }
                            }
                        }
                    }
                    continue;
                }
                Item::Macro(mac) => {
                    let Some(name) = mac.mac.path.get_ident().map(ToString::to_string) else {
                        continue;
                    };
                    if name == "macro_rules" {
                        // A macro that declares a public type named by an argument.
                        let body = mac.mac.tokens.to_string();
                        let kind = if body.contains("pub struct $") {
                            Some(Kind::Struct)
                        } else if body.contains("pub enum $") {
                            Some(Kind::Enum)
                        } else {
                            None
                        };
                        if let (Some(kind), Some(id)) = (kind, &mac.ident) {
                            self.type_macros
                                .insert((krate.to_owned(), id.to_string()), kind);
                        }
                    } else if let Some(&kind) = self.type_macros.get(&(krate.to_owned(), name)) {
                        if let Some(ty) = first_ident(&mac.mac.tokens) {
                            let declared = Declared {
                                kind,
                                public: true,
                                hidden: false,
                                alias_of: None,
                                methods: BTreeSet::new(),
                            };
                            m.items.insert(ty, declared);
                        }
                    }
                    continue;
                }
                Item::Use(u) => {
                    let mut flat = Vec::new();
                    flatten_use(&u.tree, &mut Vec::new(), &mut flat);
                    let p = is_pub(&u.vis) && !hidden(&u.attrs);
                    for (name, target) in flat {
                        m.uses.push((p, name, target));
                    }
                    continue;
                }
                Item::Mod(md) => {
                    if cfg_test(&md.attrs) {
                        continue;
                    }
                    let name = md.ident.to_string();
                    let p = is_pub(&md.vis) && !hidden(&md.attrs);
                    m.children.insert(name.clone(), p);
                    children.push((name, p, md.content.as_ref().map(|(_, items)| items.clone())));
                    continue;
                }
                _ => continue,
            };
            m.items.insert(
                name,
                Declared {
                    kind,
                    public: is_pub(vis),
                    hidden: hidden(attrs),
                    alias_of,
                    methods: methods.unwrap_or_default(),
                },
            );
        }
        self.modules.insert((krate.to_owned(), path.clone()), m);
        for (name, p, inline) in children {
            let mut child = path.clone();
            child.push(name.clone());
            let child_public = public && p;
            match inline {
                Some(items) => self.add_items(krate, child, child_public, &items, &dir.join(&name)),
                None => {
                    let (file, sub) = module_file(dir, &name);
                    let text = std::fs::read_to_string(&file)
                        .unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
                    let parsed = syn::parse_file(&text)
                        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                    self.add_items(krate, child, child_public, &parsed.items, &sub);
                }
            }
        }
    }

    /// The public names of module `module` of `krate`: (name, what it resolves to, kind).
    pub fn names(&self, krate: &str, module: &[String]) -> BTreeMap<String, (DefId, Kind)> {
        self.names_depth(krate, module, 0)
    }

    fn names_depth(
        &self,
        krate: &str,
        module: &[String],
        depth: usize,
    ) -> BTreeMap<String, (DefId, Kind)> {
        let mut out = BTreeMap::new();
        let Some(m) = self.modules.get(&(krate.to_owned(), module.to_vec())) else {
            return out;
        };
        if depth > 8 {
            return out;
        }
        for (name, d) in &m.items {
            if d.public && !d.hidden {
                let id = DefId {
                    krate: krate.into(),
                    module: module.to_vec(),
                    name: name.clone(),
                };
                out.insert(name.clone(), (id, d.kind));
            }
        }
        for (name, &p) in &m.children {
            if p {
                let mut sub = module.to_vec();
                sub.push(name.clone());
                let id = DefId {
                    krate: krate.into(),
                    module: module.to_vec(),
                    name: name.clone(),
                };
                out.insert(name.clone(), (id, Kind::Module));
            }
        }
        for (p, name, target) in &m.uses {
            if !p {
                continue;
            }
            if name == "*" {
                if let Some((k, md)) = self.module_of(krate, module, target) {
                    for (n, v) in self.names_depth(&k, &md, depth + 1) {
                        out.entry(n).or_insert(v);
                    }
                }
                continue;
            }
            if let Some(v) = self.resolve(krate, module, target, depth + 1) {
                out.insert(name.clone(), v);
            } else if let Some((k, mut path, rest)) = self.anchor(krate, module, target) {
                // A path into a scanned crate that the compiler accepts but the scan cannot
                // see the end of: a name some macro declares.
                if let Some((last, dirs)) = rest.split_last() {
                    path.extend(dirs.iter().cloned());
                    let id = DefId {
                        krate: k,
                        module: path,
                        name: last.clone(),
                    };
                    out.insert(name.clone(), (id, Kind::Item));
                }
            }
        }
        out
    }

    /// The crate and module a `use` path names (for globs and as a prefix).
    fn module_of(
        &self,
        krate: &str,
        module: &[String],
        target: &[String],
    ) -> Option<(String, Vec<String>)> {
        let (k, mut path, rest) = self.anchor(krate, module, target)?;
        for seg in rest {
            path.push(seg.clone());
        }
        self.modules
            .contains_key(&(k.clone(), path.clone()))
            .then_some((k, path))
    }

    /// Splits a `use` path into its anchor crate and module, and the remaining segments.
    fn anchor<'a>(
        &self,
        krate: &str,
        module: &[String],
        target: &'a [String],
    ) -> Option<(String, Vec<String>, &'a [String])> {
        let first = target.first()?;
        match first.as_str() {
            "crate" => Some((krate.to_owned(), Vec::new(), &target[1..])),
            "self" => Some((krate.to_owned(), module.to_vec(), &target[1..])),
            "super" => {
                let mut m = module.to_vec();
                m.pop();
                let mut rest = &target[1..];
                while rest.first().is_some_and(|s| s == "super") {
                    m.pop();
                    rest = &rest[1..];
                }
                Some((krate.to_owned(), m, rest))
            }
            other if self.modules.contains_key(&(other.to_owned(), Vec::new())) => {
                Some((other.to_owned(), Vec::new(), &target[1..]))
            }
            other => {
                // A child module of this one (2018 paths), or an unknown crate (std, …).
                let mut m = module.to_vec();
                m.push(other.to_owned());
                if self.modules.contains_key(&(krate.to_owned(), m)) {
                    Some((krate.to_owned(), module.to_vec(), target))
                } else {
                    None
                }
            }
        }
    }

    /// What a `use` path names, following re-exports.
    fn resolve(
        &self,
        krate: &str,
        module: &[String],
        target: &[String],
        depth: usize,
    ) -> Option<(DefId, Kind)> {
        if depth > 8 {
            return None;
        }
        let Some((k, mut path, rest)) = self.anchor(krate, module, target) else {
            // Another crate, not scanned: a crate alias if it is the whole path.
            return (target.len() == 1).then(|| {
                (
                    DefId {
                        krate: target[0].clone(),
                        module: Vec::new(),
                        name: target[0].clone(),
                    },
                    Kind::CrateAlias,
                )
            });
        };
        if rest.is_empty() {
            // `pub use other_crate as x` (or `self`).
            return Some((
                DefId {
                    krate: k.clone(),
                    module: path.clone(),
                    name: k,
                },
                Kind::CrateAlias,
            ));
        }
        let (last, dirs) = rest.split_last()?;
        for seg in dirs {
            path.push(seg.clone());
        }
        let m = self.modules.get(&(k.clone(), path.clone()))?;
        if let Some(d) = m.items.get(last) {
            let id = DefId {
                krate: k,
                module: path,
                name: last.clone(),
            };
            return Some((id, d.kind));
        }
        if m.children.contains_key(last) {
            let id = DefId {
                krate: k,
                module: path,
                name: last.clone(),
            };
            return Some((id, Kind::Module));
        }
        // A re-export there (public or not: `use` inside the crate).
        for (_, name, t) in &m.uses {
            if name == last {
                return self.resolve(&k, &path, t, depth + 1);
            }
        }
        // A glob there.
        for (_, name, t) in &m.uses {
            if name == "*" {
                let mut full = t.clone();
                full.push(last.clone());
                if let Some(v) = self.resolve(&k, &path, &full, depth + 1) {
                    return Some(v);
                }
            }
        }
        None
    }

    /// The methods of a definition: a trait's own, or a type's inherent ones (an alias's
    /// target's included), over its whole crate.
    pub fn methods(&self, id: &DefId, kind: Kind) -> BTreeSet<String> {
        let declared = self
            .modules
            .get(&(id.krate.clone(), id.module.clone()))
            .and_then(|m| m.items.get(&id.name));
        match kind {
            Kind::Trait => declared.map(|d| d.methods.clone()).unwrap_or_default(),
            Kind::Struct | Kind::Enum | Kind::TypeAlias => {
                let mut out = self
                    .inherent
                    .get(&(id.krate.clone(), id.name.clone()))
                    .cloned()
                    .unwrap_or_default();
                if let Some(target) = declared.and_then(|d| d.alias_of.clone()) {
                    if let Some(more) = self.inherent.get(&(id.krate.clone(), target)) {
                        out.extend(more.iter().cloned());
                    }
                }
                out
            }
            _ => BTreeSet::new(),
        }
    }

    /// Every public module of `krate`, as paths from its root (the root first).
    pub fn public_modules(&self, krate: &str) -> Vec<Vec<String>> {
        self.modules
            .iter()
            .filter(|((k, _), m)| k == krate && m.public)
            .map(|((_, p), _)| p.clone())
            .collect()
    }
}

/// `name.rs` or `name/mod.rs` beside a module file, and the directory its own children live in.
fn module_file(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let flat = dir.join(format!("{name}.rs"));
    if flat.is_file() {
        (flat, dir.join(name))
    } else {
        (dir.join(name).join("mod.rs"), dir.join(name))
    }
}
