//! `Option<T>`, `&Option<T>`, `&mut Option<T>`: zero or one item (indexed).

use crate::iter::plumbing::{Producer, ProducerCallback};
use crate::iter::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// A parallel iterator over an option's item, if any (indexed).
#[derive(Clone, Debug)]
pub struct OptionIter<T> {
    opt: Option<T>,
}

impl<T: Send> Producer for OptionIter<T> {
    type Item = T;
    type IntoIter = std::option::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.opt.into_iter()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        if index == 0 {
            (OptionIter { opt: None }, self)
        } else {
            (self, OptionIter { opt: None })
        }
    }
}
super::slice::self_producer!([T: Send] OptionIter<T>, T, len(it) usize::from(it.opt.is_some()));

impl<T> From<Option<T>> for OptionIter<T> {
    fn from(opt: Option<T>) -> Self {
        OptionIter { opt }
    }
}

impl<T: Send> IntoParallelIterator for Option<T> {
    type Iter = OptionIter<T>;
    type Item = T;
    fn into_par_iter(self) -> OptionIter<T> {
        OptionIter { opt: self }
    }
}

impl<'a, T: Sync> IntoParallelIterator for &'a Option<T> {
    type Iter = OptionIter<&'a T>;
    type Item = &'a T;
    fn into_par_iter(self) -> OptionIter<&'a T> {
        OptionIter { opt: self.as_ref() }
    }
}

impl<'a, T: Send> IntoParallelIterator for &'a mut Option<T> {
    type Iter = OptionIter<&'a mut T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> OptionIter<&'a mut T> {
        OptionIter { opt: self.as_mut() }
    }
}
