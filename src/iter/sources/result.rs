//! `Result<T, E>`, `&Result<T, E>`, `&mut Result<T, E>`: the `Ok` item, if any (indexed), as
//! rayon's; iterated as the option [`Result::ok`] (by reference: [`Result::as_ref`]).

use super::option::OptionIter;
use crate::iter::IntoParallelIterator;

impl<T: Send, E> IntoParallelIterator for Result<T, E> {
    type Iter = OptionIter<T>;
    type Item = T;
    fn into_par_iter(self) -> OptionIter<T> {
        OptionIter::from(self.ok())
    }
}

impl<'a, T: Sync, E> IntoParallelIterator for &'a Result<T, E> {
    type Iter = OptionIter<&'a T>;
    type Item = &'a T;
    fn into_par_iter(self) -> OptionIter<&'a T> {
        OptionIter::from(self.as_ref().ok())
    }
}

impl<'a, T: Send, E> IntoParallelIterator for &'a mut Result<T, E> {
    type Iter = OptionIter<&'a mut T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> OptionIter<&'a mut T> {
        OptionIter::from(self.as_mut().ok())
    }
}
