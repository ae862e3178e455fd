//! [`walk_tree_prefix`](crate::iter::walk_tree_prefix),
//! [`walk_tree_postfix`](crate::iter::walk_tree_postfix) and
//! [`walk_tree`](crate::iter::walk_tree): the nodes of a tree given by its root and a
//! function listing a node's children, in prefix order (a node before its subtrees),
//! postfix order (its subtrees, first child first, before the node), or any order.
//!
//! A piece of the walk is a list of whole subtrees plus a list of single nodes that come
//! before them (prefix) or after them (postfix). Splitting expands a lone subtree into its
//! root and its children until there are two subtrees or more, then hands the later half
//! to the right piece; a piece folds its subtrees depth-first with an explicit stack (no
//! recursion, however deep the tree).

use crate::iter::plumbing::{bridge_unindexed, Folder, UnindexedConsumer, UnindexedProducer};
use crate::iter::ParallelIterator;

/// Splits off the later half of `v` (`None` when it has fewer than two items).
fn later_half<T>(v: &mut Vec<T>) -> Option<Vec<T>> {
    (v.len() >= 2).then(|| v.split_off(v.len() / 2))
}

/// The nodes of a tree in prefix order (rayon's `WalkTreePrefix`), made by
/// [`walk_tree_prefix`](crate::iter::walk_tree_prefix).
#[derive(Debug)]
pub struct WalkTreePrefix<S, B> {
    root: S,
    children_of: B,
}

impl<S, B> WalkTreePrefix<S, B> {
    pub(crate) fn new(root: S, children_of: B) -> Self {
        WalkTreePrefix { root, children_of }
    }
}

impl<S, B, I> ParallelIterator for WalkTreePrefix<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
    I::IntoIter: DoubleEndedIterator,
{
    type Item = S;
    fn drive_unindexed<C: UnindexedConsumer<S>>(self, consumer: C) -> C::Result {
        let producer = PrefixProducer {
            before: Vec::new(),
            subtrees: vec![self.root],
            children_of: &self.children_of,
        };
        bridge_unindexed(producer, consumer)
    }
}

/// A piece of a prefix walk: the nodes `before` (in order), then the `subtrees` (in order).
struct PrefixProducer<'b, S, B> {
    before: Vec<S>,
    subtrees: Vec<S>,
    children_of: &'b B,
}

impl<S, B, I> UnindexedProducer for PrefixProducer<'_, S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
    I::IntoIter: DoubleEndedIterator,
{
    type Item = S;
    fn split(mut self) -> (Self, Option<Self>) {
        while self.subtrees.len() == 1 {
            let node = self.subtrees.pop().expect("one subtree");
            self.subtrees.extend((self.children_of)(&node));
            self.before.push(node);
        }
        let children_of = self.children_of;
        let right = match later_half(&mut self.subtrees) {
            Some(subtrees) => Some(PrefixProducer {
                before: Vec::new(),
                subtrees,
                children_of,
            }),
            // No subtree left: the nodes before are the whole piece.
            None => later_half(&mut self.before).map(|before| PrefixProducer {
                before,
                subtrees: Vec::new(),
                children_of,
            }),
        };
        (self, right)
    }

    fn fold_with<F: Folder<S>>(self, mut folder: F) -> F {
        folder = folder.consume_iter(self.before);
        // A stack of nodes still to visit, the next one on top.
        let mut stack: Vec<S> = self.subtrees.into_iter().rev().collect();
        while let Some(node) = stack.pop() {
            if folder.full() {
                break;
            }
            stack.extend((self.children_of)(&node).into_iter().rev());
            folder = folder.consume(node);
        }
        folder
    }
}

/// The nodes of a tree in postfix order (rayon's `WalkTreePostfix`), made by
/// [`walk_tree_postfix`](crate::iter::walk_tree_postfix).
#[derive(Debug)]
pub struct WalkTreePostfix<S, B> {
    root: S,
    children_of: B,
}

impl<S, B> WalkTreePostfix<S, B> {
    pub(crate) fn new(root: S, children_of: B) -> Self {
        WalkTreePostfix { root, children_of }
    }
}

impl<S, B, I> ParallelIterator for WalkTreePostfix<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    type Item = S;
    fn drive_unindexed<C: UnindexedConsumer<S>>(self, consumer: C) -> C::Result {
        let producer = PostfixProducer {
            subtrees: vec![self.root],
            after: Vec::new(),
            children_of: &self.children_of,
        };
        bridge_unindexed(producer, consumer)
    }
}

/// A piece of a postfix walk: the `subtrees` (in order), then the nodes `after`, in
/// *reverse* order (the last one comes first: the innermost ancestor).
struct PostfixProducer<'b, S, B> {
    subtrees: Vec<S>,
    after: Vec<S>,
    children_of: &'b B,
}

impl<S, B, I> UnindexedProducer for PostfixProducer<'_, S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    type Item = S;
    fn split(mut self) -> (Self, Option<Self>) {
        while self.subtrees.len() == 1 {
            let node = self.subtrees.pop().expect("one subtree");
            self.subtrees.extend((self.children_of)(&node));
            self.after.push(node);
        }
        let children_of = self.children_of;
        let right = match later_half(&mut self.subtrees) {
            // The later subtrees, then every node after.
            Some(subtrees) => Some(PostfixProducer {
                subtrees,
                after: std::mem::take(&mut self.after),
                children_of,
            }),
            // No subtree left: the first nodes after (stored last) stay on the left.
            None => later_half(&mut self.after).map(|mut first| {
                std::mem::swap(&mut first, &mut self.after);
                PostfixProducer {
                    subtrees: Vec::new(),
                    after: first,
                    children_of,
                }
            }),
        };
        (self, right)
    }

    fn fold_with<F: Folder<S>>(self, mut folder: F) -> F {
        for root in self.subtrees {
            // Nodes whose children are being walked, with the children still to walk.
            let mut stack = vec![((self.children_of)(&root).into_iter(), root)];
            while let Some((children, _)) = stack.last_mut() {
                if folder.full() {
                    return folder;
                }
                match children.next() {
                    Some(child) => {
                        let grandchildren = (self.children_of)(&child).into_iter();
                        stack.push((grandchildren, child));
                    }
                    None => {
                        let (_, node) = stack.pop().expect("a node");
                        folder = folder.consume(node);
                    }
                }
            }
        }
        if folder.full() {
            return folder;
        }
        folder.consume_iter(self.after.into_iter().rev())
    }
}

/// The nodes of a tree in an unspecified order (rayon's `WalkTree`), made by
/// [`walk_tree`](crate::iter::walk_tree). Today the postfix walk.
#[derive(Debug)]
pub struct WalkTree<S, B>(WalkTreePostfix<S, B>);

impl<S, B> WalkTree<S, B> {
    pub(crate) fn new(root: S, children_of: B) -> Self {
        WalkTree(WalkTreePostfix::new(root, children_of))
    }
}

impl<S, B, I> ParallelIterator for WalkTree<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S> + Send,
    I::IntoIter: DoubleEndedIterator,
{
    type Item = S;
    fn drive_unindexed<C: UnindexedConsumer<S>>(self, consumer: C) -> C::Result {
        self.0.drive_unindexed(consumer)
    }
}
