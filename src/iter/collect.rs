//! Collecting: the pieces' items gathered as a list of vectors, in order, then moved into
//! the collection ([`FromParallelIterator`], [`ParallelExtend`]); `unzip`. A `Vec` of an
//! iterator of known length is written in place instead, each piece into its own part of
//! the vector's spare capacity ([`consumer`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::ffi::{OsStr, OsString};
use std::hash::{BuildHasher, Hash};
use std::rc::Rc;
use std::sync::Arc;

use super::plumbing::{split_ignoring_index, Consumer, Folder, Reducer, UnindexedConsumer};
use super::{Either, FromParallelIterator, IntoParallelIterator, ParallelExtend, ParallelIterator};

mod consumer;

/// The items of `iter`, as the pieces' vectors in order.
pub(super) fn collect_list<I>(iter: I) -> LinkedList<Vec<I::Item>>
where
    I: IntoParallelIterator,
{
    iter.into_par_iter().drive_unindexed(ListConsumer)
}

/// The items of `iter` in one vector, in order.
fn collect_vec<I: IntoParallelIterator>(iter: I) -> Vec<I::Item> {
    let mut v = Vec::new();
    extend_vec(&mut v, iter);
    v
}

/// Appends the items of `iter` to `vec`, in order: written in place by the pieces when the
/// iterator knows its length ([`consumer`]), else gathered as the pieces' vectors first.
fn extend_vec<I: IntoParallelIterator>(vec: &mut Vec<I::Item>, iter: I) {
    let iter = iter.into_par_iter();
    // A length the vector cannot reserve (an iterator's wrong `opt_len`) takes the
    // gathering path, as an unknown one does.
    if let Some(len) = iter.opt_len().filter(|&len| vec.try_reserve(len).is_ok()) {
        consumer::extend_in_place(vec, len, iter);
        return;
    }
    let mut list = collect_list(iter);
    if vec.is_empty() && list.len() == 1 {
        if let Some(part) = list.pop_front() {
            *vec = part;
            return;
        }
    }
    vec.reserve(list.iter().map(Vec::len).sum());
    for mut part in list {
        vec.append(&mut part);
    }
}

struct ListConsumer;

impl<T: Send> Consumer<T> for ListConsumer {
    type Folder = ListFolder<T>;
    type Reducer = ListConsumer;
    type Result = LinkedList<Vec<T>>;

    fn split_at(self, _index: usize) -> (Self, Self, Self::Reducer) {
        split_ignoring_index::<T, _>(self)
    }

    fn into_folder(self) -> ListFolder<T> {
        ListFolder(Vec::new())
    }
    fn full(&self) -> bool {
        false
    }
}

impl<T: Send> UnindexedConsumer<T> for ListConsumer {
    fn split_off_left(&self) -> Self {
        ListConsumer
    }
    fn to_reducer(&self) -> Self {
        ListConsumer
    }
}

impl<T> Reducer<LinkedList<Vec<T>>> for ListConsumer {
    fn reduce(
        self,
        mut left: LinkedList<Vec<T>>,
        mut right: LinkedList<Vec<T>>,
    ) -> LinkedList<Vec<T>> {
        left.append(&mut right);
        left
    }
}

struct ListFolder<T>(Vec<T>);

impl<T> Folder<T> for ListFolder<T> {
    type Result = LinkedList<Vec<T>>;
    fn consume(mut self, item: T) -> Self {
        self.0.push(item);
        self
    }
    fn consume_iter<I: IntoIterator<Item = T>>(mut self, iter: I) -> Self {
        self.0.extend(iter);
        self
    }
    fn complete(self) -> LinkedList<Vec<T>> {
        let mut list = LinkedList::new();
        if !self.0.is_empty() {
            list.push_back(self.0);
        }
        list
    }
    fn full(&self) -> bool {
        false
    }
}

/// Every collection here: `FromParallelIterator` through `Default` + `ParallelExtend`, and
/// `ParallelExtend` by extending with the gathered vectors.
macro_rules! collection {
    ($(impl[$($g:tt)*] $t:ty => $coll:ty;)*) => {$(
        impl<$($g)*> FromParallelIterator<$t> for $coll {
            fn from_par_iter<I: IntoParallelIterator<Item = $t>>(par_iter: I) -> Self {
                let mut c = <$coll>::default();
                c.par_extend(par_iter);
                c
            }
        }

        impl<$($g)*> ParallelExtend<$t> for $coll {
            fn par_extend<I: IntoParallelIterator<Item = $t>>(&mut self, par_iter: I) {
                for part in collect_list(par_iter) {
                    self.extend(part);
                }
            }
        }
    )*};
}

collection! {
    impl[K: Eq + Hash + Send, V: Send, S: BuildHasher + Default + Send] (K, V) => HashMap<K, V, S>;
    impl[T: Eq + Hash + Send, S: BuildHasher + Default + Send] T => HashSet<T, S>;
    impl[K: Ord + Send, V: Send] (K, V) => BTreeMap<K, V>;
    impl[T: Ord + Send] T => BTreeSet<T>;
    impl[T: Send] T => VecDeque<T>;
    impl[] char => String;
    impl['a] &'a char => String;
    impl['a] &'a str => String;
    impl[] String => String;
    impl['a] std::borrow::Cow<'a, str> => String;
}

impl<T: Send> FromParallelIterator<T> for Vec<T> {
    fn from_par_iter<I: IntoParallelIterator<Item = T>>(par_iter: I) -> Self {
        collect_vec(par_iter)
    }
}

impl<T: Send> ParallelExtend<T> for Vec<T> {
    fn par_extend<I: IntoParallelIterator<Item = T>>(&mut self, par_iter: I) {
        extend_vec(self, par_iter);
    }
}

/// Copies the items in place, as [`ParallelExtend<T>`] does.
impl<'a, T: Copy + Send + Sync + 'a> ParallelExtend<&'a T> for Vec<T> {
    fn par_extend<I: IntoParallelIterator<Item = &'a T>>(&mut self, par_iter: I) {
        extend_vec(self, par_iter.into_par_iter().copied());
    }
}

impl<T: Send> FromParallelIterator<T> for LinkedList<T> {
    fn from_par_iter<I: IntoParallelIterator<Item = T>>(par_iter: I) -> Self {
        collect_list(par_iter).into_iter().flatten().collect()
    }
}

impl FromParallelIterator<()> for () {
    fn from_par_iter<I: IntoParallelIterator<Item = ()>>(par_iter: I) -> Self {
        par_iter.into_par_iter().for_each(drop);
    }
}

/// `unzip`: the pairs gathered in order, then each side extended into its collection.
pub(super) fn unzip<I, A, B, FromA, FromB>(iter: I) -> (FromA, FromB)
where
    I: ParallelIterator<Item = (A, B)>,
    A: Send,
    B: Send,
    FromA: Default + Send + ParallelExtend<A>,
    FromB: Default + Send + ParallelExtend<B>,
{
    let mut ab = (FromA::default(), FromB::default());
    ab.par_extend(iter);
    ab
}

/// Collects the `Ok` items, or returns one of the errors (the items are all visited).
impl<C, T, E> FromParallelIterator<Result<T, E>> for Result<C, E>
where
    C: FromParallelIterator<T>,
    T: Send,
    E: Send,
{
    fn from_par_iter<I: IntoParallelIterator<Item = Result<T, E>>>(par_iter: I) -> Self {
        let error = std::sync::Mutex::new(None);
        let c = C::from_par_iter(par_iter.into_par_iter().filter_map(|r| match r {
            Ok(t) => Some(t),
            Err(e) => {
                error
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert(e);
                None
            }
        }));
        match error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(c),
        }
    }
}

/// Collects the `Some` items, or returns `None` if there was a `None`.
impl<C, T> FromParallelIterator<Option<T>> for Option<C>
where
    C: FromParallelIterator<T>,
    T: Send,
{
    fn from_par_iter<I: IntoParallelIterator<Item = Option<T>>>(par_iter: I) -> Self {
        let r: Result<C, ()> = par_iter.into_par_iter().map(|o| o.ok_or(())).collect();
        r.ok()
    }
}

/// The pieces' lists of pairs, split into a list of vectors per side (order kept).
fn split_pairs<I, A, B>(iter: I) -> (Vec<A>, Vec<B>)
where
    I: IntoParallelIterator<Item = (A, B)>,
{
    let list = collect_list(iter);
    let n = list.iter().map(Vec::len).sum();
    let (mut va, mut vb) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for part in list {
        for (a, b) in part {
            va.push(a);
            vb.push(b);
        }
    }
    (va, vb)
}

/// The pieces' lists of `Either`s, split into the lefts and the rights (order kept).
fn split_either<I, L, R>(iter: I) -> (Vec<L>, Vec<R>)
where
    I: IntoParallelIterator<Item = Either<L, R>>,
{
    let (mut vl, mut vr) = (Vec::new(), Vec::new());
    for part in collect_list(iter) {
        for x in part {
            match x {
                Either::Left(l) => vl.push(l),
                Either::Right(r) => vr.push(r),
            }
        }
    }
    (vl, vr)
}

/// `partition_map`: the items mapped to `Either`, gathered in order, each side extended
/// into its collection.
pub(super) fn partition_map<I, A, B, P, L, R>(iter: I, predicate: P) -> (A, B)
where
    I: ParallelIterator,
    A: Default + Send + ParallelExtend<L>,
    B: Default + Send + ParallelExtend<R>,
    P: Fn(I::Item) -> Either<L, R> + Sync + Send,
    L: Send,
    R: Send,
{
    let mut ab = (A::default(), B::default());
    ab.par_extend(iter.map(predicate));
    ab
}

/// Extends each side with its half of the pairs, in order (as `unzip`).
impl<A, B, FromA, FromB> ParallelExtend<(A, B)> for (FromA, FromB)
where
    A: Send,
    B: Send,
    FromA: Send + ParallelExtend<A>,
    FromB: Send + ParallelExtend<B>,
{
    fn par_extend<I: IntoParallelIterator<Item = (A, B)>>(&mut self, par_iter: I) {
        let (va, vb) = split_pairs(par_iter);
        self.0.par_extend(va);
        self.1.par_extend(vb);
    }
}

/// Extends the first collection with the `Left`s and the second with the `Right`s (as
/// `partition_map`).
impl<L, R, A, B> ParallelExtend<Either<L, R>> for (A, B)
where
    L: Send,
    R: Send,
    A: Send + ParallelExtend<L>,
    B: Send + ParallelExtend<R>,
{
    fn par_extend<I: IntoParallelIterator<Item = Either<L, R>>>(&mut self, par_iter: I) {
        let (vl, vr) = split_either(par_iter);
        self.0.par_extend(vl);
        self.1.par_extend(vr);
    }
}

/// Collects pairs into a pair of collections (as `unzip`).
impl<A, B, FromA, FromB> FromParallelIterator<(A, B)> for (FromA, FromB)
where
    A: Send,
    B: Send,
    FromA: Send + FromParallelIterator<A>,
    FromB: Send + FromParallelIterator<B>,
{
    fn from_par_iter<I: IntoParallelIterator<Item = (A, B)>>(par_iter: I) -> Self {
        let (va, vb) = split_pairs(par_iter);
        (FromA::from_par_iter(va), FromB::from_par_iter(vb))
    }
}

/// Collects the `Left`s and the `Right`s (as `partition_map`).
impl<L, R, A, B> FromParallelIterator<Either<L, R>> for (A, B)
where
    L: Send,
    R: Send,
    A: Send + FromParallelIterator<L>,
    B: Send + FromParallelIterator<R>,
{
    fn from_par_iter<I: IntoParallelIterator<Item = Either<L, R>>>(par_iter: I) -> Self {
        let (vl, vr) = split_either(par_iter);
        (A::from_par_iter(vl), B::from_par_iter(vr))
    }
}

/// `ParallelExtend` only (rayon has no `FromParallelIterator` for these: references to
/// `Copy` items, ...), by extending with the gathered vectors.
macro_rules! extend_only {
    ($(impl[$($g:tt)*] $t:ty => $coll:ty;)*) => {$(
        impl<$($g)*> ParallelExtend<$t> for $coll {
            fn par_extend<I: IntoParallelIterator<Item = $t>>(&mut self, par_iter: I) {
                for part in collect_list(par_iter) {
                    self.extend(part);
                }
            }
        }
    )*};
}

extend_only! {
    impl['a, T: Copy + Send + Sync + 'a] &'a T => VecDeque<T>;
    impl['a, T: Copy + Send + Sync + 'a] &'a T => LinkedList<T>;
    impl['a, T: Copy + Ord + Send + Sync + 'a] &'a T => BTreeSet<T>;
    impl['a, T: Copy + Ord + Send + Sync + 'a] &'a T => BinaryHeap<T>;
    impl['a, T: Copy + Eq + Hash + Send + Sync + 'a, S: BuildHasher + Send] &'a T => HashSet<T, S>;
    impl['a, K: Copy + Ord + Send + Sync + 'a, V: Copy + Send + Sync + 'a] (&'a K, &'a V) => BTreeMap<K, V>;
    impl['a, K: Copy + Eq + Hash + Send + Sync + 'a, V: Copy + Send + Sync + 'a, S: BuildHasher + Send] (&'a K, &'a V) => HashMap<K, V, S>;
    impl[T: Send] T => LinkedList<T>;
    impl[] Box<str> => String;
    impl['a] &'a OsStr => OsString;
    impl[] OsString => OsString;
    impl['a] Cow<'a, OsStr> => OsString;
}

collection! {
    impl[T: Ord + Send] T => BinaryHeap<T>;
}

macro_rules! from_vec {
    ($($coll:ident),*) => {$(
        /// Collects into a `Vec` first.
        impl<T: Send> FromParallelIterator<T> for $coll<[T]> {
            fn from_par_iter<I: IntoParallelIterator<Item = T>>(par_iter: I) -> Self {
                collect_vec(par_iter).into()
            }
        }
    )*};
}

from_vec!(Box, Rc, Arc);

macro_rules! from_os_string {
    ($(impl[$($g:tt)*] $t:ty;)*) => {$(
        impl<$($g)*> FromParallelIterator<$t> for OsString {
            fn from_par_iter<I: IntoParallelIterator<Item = $t>>(par_iter: I) -> Self {
                let mut s = OsString::new();
                s.par_extend(par_iter);
                s
            }
        }
    )*};
}

from_os_string! {
    impl[] OsString;
    impl['a] &'a OsStr;
    impl['a] Cow<'a, OsStr>;
}

impl FromParallelIterator<Box<str>> for String {
    fn from_par_iter<I: IntoParallelIterator<Item = Box<str>>>(par_iter: I) -> Self {
        let mut s = String::new();
        s.par_extend(par_iter);
        s
    }
}

/// Collects into the owned form.
impl<'a, C, T> FromParallelIterator<T> for Cow<'a, C>
where
    C: ToOwned<Owned: FromParallelIterator<T>> + ?Sized,
    T: Send,
{
    fn from_par_iter<I: IntoParallelIterator<Item = T>>(par_iter: I) -> Self {
        Cow::Owned(C::Owned::from_par_iter(par_iter))
    }
}

impl ParallelExtend<()> for () {
    fn par_extend<I: IntoParallelIterator<Item = ()>>(&mut self, par_iter: I) {
        par_iter.into_par_iter().for_each(drop);
    }
}
