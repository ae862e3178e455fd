//! Parallel iterators over strings, as rayon's `ParallelString` names them
//! (`use zonal::prelude::*`): `par_chars`, `par_split`, `par_lines`, `par_matches`, ...
//!
//! All of them are unindexed (a string's items have no known count). The character-wise
//! ones (`par_chars`, `par_char_indices`, `par_bytes`, `par_encode_utf16`, `par_matches`,
//! `par_match_indices`) split the string at a char boundary near the middle; the
//! separator-wise ones (`par_split*`, `par_lines`, `par_split*whitespace`) split it at a
//! separator near the middle (the [fission](crate::slice) engine of `par_split` on slices),
//! so every half yields, sequentially, exactly the pieces `str`'s own methods would, and
//! `collect` keeps them in order.
//!
//! Char ranges (`'a'..'z'`, `'a'..='z'`) are parallel iterators too, as in rayon: see
//! [`crate::range`].
//!
//! Patterns are those of rayon: a `char`, a `&[char]`, a `[char; N]`, a `&[char; N]`, or a
//! closure `Fn(char) -> bool` (each matches one char at a time).
//!
//! ```
//! use zonal::prelude::*;
//! let s = "α,β;γ";
//! let parts: Vec<&str> = s.par_split([',', ';']).collect();
//! assert_eq!(parts, ["α", "β", "γ"]);
//! let n = s.par_chars().filter(|c| c.is_alphabetic()).count();
//! assert_eq!(n, 3);
//! ```

use crate::iter::plumbing::{bridge_unindexed, Folder, UnindexedConsumer, UnindexedProducer};
use crate::iter::ParallelIterator;
use crate::slice::{Fissile, FissionProducer};

use self::private::Pattern;

/// The sealed pattern trait: users cannot name it or implement it, as in rayon.
mod private {
    /// What `par_split` and its kin accept as a separator: a test on one char.
    // Sealed (in a private module), as rayon's is: reachable only as a bound.
    #[allow(unreachable_pub)]
    pub trait Pattern: Sized + Sync + Send {
        /// Whether `c` matches.
        fn is_match(&self, c: char) -> bool;
    }
}

impl Pattern for char {
    fn is_match(&self, c: char) -> bool {
        *self == c
    }
}

impl Pattern for &[char] {
    fn is_match(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<const N: usize> Pattern for [char; N] {
    fn is_match(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<const N: usize> Pattern for &[char; N] {
    fn is_match(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<FN: Fn(char) -> bool + Sync + Send> Pattern for FN {
    fn is_match(&self, c: char) -> bool {
        self(c)
    }
}

/// Parallel iterators over a string (rayon's names; `use zonal::prelude::*`).
///
/// ```
/// use zonal::prelude::*;
/// let words: Vec<&str> = "one two  three".par_split_whitespace().collect();
/// assert_eq!(words, ["one", "two", "three"]);
/// let lines: Vec<&str> = "a\r\nb\n".par_lines().collect();
/// assert_eq!(lines, ["a", "b"]);
/// ```
pub trait ParallelString {
    /// The string itself.
    fn as_parallel_string(&self) -> &str;

    /// The chars, in parallel (as `str::chars`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let s: String = "héllo".par_chars().map(|c| c.to_ascii_uppercase()).collect();
    /// assert_eq!(s, "HéLLO");
    /// ```
    fn par_chars(&self) -> Chars<'_> {
        Chars {
            chars: self.as_parallel_string(),
        }
    }

    /// The chars with their byte offsets, in parallel (as `str::char_indices`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let v: Vec<(usize, char)> = "aé b".par_char_indices().collect();
    /// assert_eq!(v, [(0, 'a'), (1, 'é'), (3, ' '), (4, 'b')]);
    /// ```
    fn par_char_indices(&self) -> CharIndices<'_> {
        CharIndices {
            chars: self.as_parallel_string(),
        }
    }

    /// The bytes, in parallel (as `str::bytes`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let total: u32 = "abc".par_bytes().map(u32::from).sum();
    /// assert_eq!(total, 97 + 98 + 99);
    /// ```
    fn par_bytes(&self) -> Bytes<'_> {
        Bytes {
            chars: self.as_parallel_string(),
        }
    }

    /// The UTF-16 code units, in parallel (as `str::encode_utf16`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let units: Vec<u16> = "a🦀".par_encode_utf16().collect();
    /// assert_eq!(units, [0x61, 0xD83E, 0xDD80]);
    /// ```
    fn par_encode_utf16(&self) -> EncodeUtf16<'_> {
        EncodeUtf16 {
            chars: self.as_parallel_string(),
        }
    }

    /// The substrings between matches of `separator`, in parallel (as `str::split`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let parts: Vec<&str> = "a,b,,c".par_split(',').collect();
    /// assert_eq!(parts, ["a", "b", "", "c"]);
    /// ```
    fn par_split<P: Pattern>(&self, separator: P) -> Split<'_, P> {
        Split {
            chars: self.as_parallel_string(),
            separator,
        }
    }

    /// The substrings ending with a match of `separator` (or with the string's end), in
    /// parallel (as `str::split_inclusive`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let parts: Vec<&str> = "a,b,,c".par_split_inclusive(',').collect();
    /// assert_eq!(parts, ["a,", "b,", ",", "c"]);
    /// ```
    fn par_split_inclusive<P: Pattern>(&self, separator: P) -> SplitInclusive<'_, P> {
        SplitInclusive {
            chars: self.as_parallel_string(),
            separator,
        }
    }

    /// The substrings between matches of `terminator`, without a last empty one, in
    /// parallel (as `str::split_terminator`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let parts: Vec<&str> = "a.b.".par_split_terminator('.').collect();
    /// assert_eq!(parts, ["a", "b"]);
    /// ```
    fn par_split_terminator<P: Pattern>(&self, terminator: P) -> SplitTerminator<'_, P> {
        SplitTerminator {
            chars: self.as_parallel_string(),
            terminator,
        }
    }

    /// The lines, without their `\n` or `\r\n`, in parallel (as `str::lines`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let lines: Vec<&str> = "one\r\ntwo\n\nthree".par_lines().collect();
    /// assert_eq!(lines, ["one", "two", "", "three"]);
    /// ```
    fn par_lines(&self) -> Lines<'_> {
        Lines(self.as_parallel_string())
    }

    /// The non-empty substrings between Unicode whitespace, in parallel (as
    /// `str::split_whitespace`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let words: Vec<&str> = " a\u{2009}b\t c ".par_split_whitespace().collect();
    /// assert_eq!(words, ["a", "b", "c"]);
    /// ```
    fn par_split_whitespace(&self) -> SplitWhitespace<'_> {
        SplitWhitespace(self.as_parallel_string())
    }

    /// The non-empty substrings between ASCII whitespace, in parallel (as
    /// `str::split_ascii_whitespace`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let words: Vec<&str> = " a\u{2009}b\t c ".par_split_ascii_whitespace().collect();
    /// assert_eq!(words, ["a\u{2009}b", "c"]);
    /// ```
    fn par_split_ascii_whitespace(&self) -> SplitAsciiWhitespace<'_> {
        SplitAsciiWhitespace(self.as_parallel_string())
    }

    /// The matches of `pattern`, in parallel (as `str::matches`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let digits: Vec<&str> = "a1b22c".par_matches(|c: char| c.is_ascii_digit()).collect();
    /// assert_eq!(digits, ["1", "2", "2"]);
    /// ```
    fn par_matches<P: Pattern>(&self, pattern: P) -> Matches<'_, P> {
        Matches {
            chars: self.as_parallel_string(),
            pattern,
        }
    }

    /// The matches of `pattern` with their byte offsets, in parallel (as
    /// `str::match_indices`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let found: Vec<(usize, &str)> = "é-a-".par_match_indices('-').collect();
    /// assert_eq!(found, [(2, "-"), (4, "-")]);
    /// ```
    fn par_match_indices<P: Pattern>(&self, pattern: P) -> MatchIndices<'_, P> {
        MatchIndices {
            chars: self.as_parallel_string(),
            pattern,
        }
    }
}

impl ParallelString for str {
    #[inline]
    fn as_parallel_string(&self) -> &str {
        self
    }
}

// --- char-wise iterators: split at a char boundary -------------------------------------

/// What a char-wise iterator yields for one piece of the string (`offset`: the piece's
/// byte offset in the whole string).
trait PieceItems<'ch>: Copy + Send {
    type Item;
    fn fold_piece<F: Folder<Self::Item>>(self, piece: &'ch str, offset: usize, folder: F) -> F;
}

/// A piece of the string, split at a char boundary near its middle.
struct CharPieces<'ch, K> {
    piece: &'ch str,
    offset: usize,
    items: K,
}

/// A char boundary of `s` near its middle, if one lies strictly inside.
fn inner_boundary(s: &str) -> Option<usize> {
    let mid = s.len() / 2;
    let at = (mid..s.len())
        .find(|&i| s.is_char_boundary(i))
        .or_else(|| (1..mid).rev().find(|&i| s.is_char_boundary(i)))?;
    (at > 0 && at < s.len()).then_some(at)
}

impl<'ch, K: PieceItems<'ch>> UnindexedProducer for CharPieces<'ch, K> {
    type Item = K::Item;

    fn split(self) -> (Self, Option<Self>) {
        match inner_boundary(self.piece) {
            Some(at) => {
                let (left, right) = self.piece.split_at(at);
                let right = CharPieces {
                    piece: right,
                    offset: self.offset + at,
                    items: self.items,
                };
                (
                    CharPieces {
                        piece: left,
                        ..self
                    },
                    Some(right),
                )
            }
            None => (self, None),
        }
    }

    fn fold_with<F: Folder<K::Item>>(self, folder: F) -> F {
        self.items.fold_piece(self.piece, self.offset, folder)
    }
}

/// Runs a char-wise iterator over `s`.
fn drive_chars<'ch, K, C>(s: &'ch str, items: K, consumer: C) -> C::Result
where
    K: PieceItems<'ch>,
    C: UnindexedConsumer<K::Item>,
{
    let producer = CharPieces {
        piece: s,
        offset: 0,
        items,
    };
    bridge_unindexed(producer, consumer)
}

/// Declares a char-wise iterator: a struct over the string, its `ParallelIterator` impl,
/// and its items per piece.
macro_rules! char_wise {
    (
        $(#[$doc:meta])*
        $name:ident, $kind:ident, $item:ty,
        |$piece:ident, $offset:ident| $iter:expr
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        #[must_use = "iterator adaptors are lazy"]
        pub struct $name<'ch> {
            chars: &'ch str,
        }

        #[derive(Clone, Copy)]
        struct $kind;

        impl<'ch> PieceItems<'ch> for $kind {
            type Item = $item;
            fn fold_piece<F: Folder<$item>>(self, $piece: &'ch str, $offset: usize, folder: F) -> F {
                folder.consume_iter($iter)
            }
        }

        impl<'ch> ParallelIterator for $name<'ch> {
            type Item = $item;
            fn drive_unindexed<C: UnindexedConsumer<$item>>(self, consumer: C) -> C::Result {
                drive_chars(self.chars, $kind, consumer)
            }
        }
    };
}

char_wise!(
    /// The chars of a string (unindexed; [`ParallelString::par_chars`]).
    Chars, CharsItems, char,
    |piece, _offset| piece.chars()
);
char_wise!(
    /// The chars of a string with their byte offsets (unindexed;
    /// [`ParallelString::par_char_indices`]).
    CharIndices, CharIndicesItems, (usize, char),
    |piece, offset| piece.char_indices().map(move |(i, c)| (offset + i, c))
);
char_wise!(
    /// The bytes of a string (unindexed; [`ParallelString::par_bytes`]).
    Bytes, BytesItems, u8,
    |piece, _offset| piece.bytes()
);
char_wise!(
    /// The UTF-16 code units of a string (unindexed; [`ParallelString::par_encode_utf16`]).
    EncodeUtf16, EncodeUtf16Items, u16,
    |piece, _offset| piece.encode_utf16()
);

/// The matches of a pattern in a piece (each match is one char, so none crosses a cut).
struct MatchItems<'p, P>(&'p P);

impl<P> Clone for MatchItems<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for MatchItems<'_, P> {}

impl<'ch, P: Pattern> PieceItems<'ch> for MatchItems<'_, P> {
    type Item = &'ch str;
    fn fold_piece<F: Folder<&'ch str>>(self, piece: &'ch str, _: usize, folder: F) -> F {
        folder.consume_iter(piece.matches(|c| self.0.is_match(c)))
    }
}

/// The matches of a pattern, with their offsets.
struct MatchIndexItems<'p, P>(&'p P);

impl<P> Clone for MatchIndexItems<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for MatchIndexItems<'_, P> {}

impl<'ch, P: Pattern> PieceItems<'ch> for MatchIndexItems<'_, P> {
    type Item = (usize, &'ch str);
    fn fold_piece<F: Folder<(usize, &'ch str)>>(
        self,
        piece: &'ch str,
        offset: usize,
        folder: F,
    ) -> F {
        let found = piece.match_indices(|c| self.0.is_match(c));
        folder.consume_iter(found.map(|(i, m)| (offset + i, m)))
    }
}

/// The matches of a pattern in a string (unindexed; [`ParallelString::par_matches`]).
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct Matches<'ch, P: Pattern> {
    chars: &'ch str,
    pattern: P,
}

impl<'ch, P: Pattern> ParallelIterator for Matches<'ch, P> {
    type Item = &'ch str;
    fn drive_unindexed<C: UnindexedConsumer<&'ch str>>(self, consumer: C) -> C::Result {
        drive_chars(self.chars, MatchItems(&self.pattern), consumer)
    }
}

/// The matches of a pattern in a string, with their byte offsets (unindexed;
/// [`ParallelString::par_match_indices`]).
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct MatchIndices<'ch, P: Pattern> {
    chars: &'ch str,
    pattern: P,
}

impl<'ch, P: Pattern> ParallelIterator for MatchIndices<'ch, P> {
    type Item = (usize, &'ch str);
    fn drive_unindexed<C: UnindexedConsumer<(usize, &'ch str)>>(self, consumer: C) -> C::Result {
        drive_chars(self.chars, MatchIndexItems(&self.pattern), consumer)
    }
}

// --- separator-wise iterators: split at a separator --------------------------------------

impl<P: Pattern> Fissile<P> for &str {
    fn length(&self) -> usize {
        self.len()
    }

    fn midpoint(&self, end: usize) -> usize {
        (end / 2..=end)
            .find(|&i| self.is_char_boundary(i))
            .unwrap_or(end)
    }

    fn find(&self, sep: &P, start: usize, end: usize) -> Option<usize> {
        self[start..end]
            .char_indices()
            .find(|&(_, c)| sep.is_match(c))
            .map(|(i, _)| start + i)
    }

    fn rfind(&self, sep: &P, end: usize) -> Option<usize> {
        self[..end]
            .char_indices()
            .rev()
            .find(|&(_, c)| sep.is_match(c))
            .map(|(i, _)| i)
    }

    fn cut(self, _: &P, pos: usize, inclusive: bool) -> (Self, Self) {
        let sep_len = self[pos..].chars().next().map_or(0, char::len_utf8);
        let end = pos + sep_len;
        if inclusive {
            self.split_at(end)
        } else {
            (&self[..pos], &self[end..])
        }
    }

    fn fold_pieces<F: Folder<Self>>(
        self,
        sep: &P,
        folder: F,
        inclusive: bool,
        skip_last: bool,
    ) -> F {
        let is_sep = |c: char| sep.is_match(c);
        if inclusive {
            folder.consume_iter(self.split_inclusive(is_sep))
        } else if skip_last {
            folder.consume_iter(self.split_terminator(is_sep))
        } else {
            folder.consume_iter(self.split(is_sep))
        }
    }
}

/// Runs a separator-wise iterator over `s`.
fn drive_split<'ch, P, C>(
    s: &'ch str,
    sep: &P,
    inclusive: bool,
    skip_last: bool,
    consumer: C,
) -> C::Result
where
    P: Pattern,
    C: UnindexedConsumer<&'ch str>,
{
    bridge_unindexed(FissionProducer::new(s, sep, inclusive, skip_last), consumer)
}

/// The substrings between matches of a pattern (unindexed; [`ParallelString::par_split`]).
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct Split<'ch, P: Pattern> {
    chars: &'ch str,
    separator: P,
}

impl<'ch, P: Pattern> ParallelIterator for Split<'ch, P> {
    type Item = &'ch str;
    fn drive_unindexed<C: UnindexedConsumer<&'ch str>>(self, consumer: C) -> C::Result {
        drive_split(self.chars, &self.separator, false, false, consumer)
    }
}

/// The substrings ending with a match of a pattern, or with the string's end (unindexed;
/// [`ParallelString::par_split_inclusive`]).
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct SplitInclusive<'ch, P: Pattern> {
    chars: &'ch str,
    separator: P,
}

impl<'ch, P: Pattern> ParallelIterator for SplitInclusive<'ch, P> {
    type Item = &'ch str;
    fn drive_unindexed<C: UnindexedConsumer<&'ch str>>(self, consumer: C) -> C::Result {
        drive_split(self.chars, &self.separator, true, false, consumer)
    }
}

/// The substrings between matches of a pattern, without a last empty one (unindexed;
/// [`ParallelString::par_split_terminator`]).
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct SplitTerminator<'ch, P: Pattern> {
    chars: &'ch str,
    terminator: P,
}

impl<'ch, P: Pattern> ParallelIterator for SplitTerminator<'ch, P> {
    type Item = &'ch str;
    fn drive_unindexed<C: UnindexedConsumer<&'ch str>>(self, consumer: C) -> C::Result {
        drive_split(self.chars, &self.terminator, false, true, consumer)
    }
}

/// A line without its ending: `\n`, or `\r\n` (a lone `\r` stays, as in `str::lines`).
fn strip_line_ending(line: &str) -> &str {
    match line.strip_suffix('\n') {
        Some(line) => line.strip_suffix('\r').unwrap_or(line),
        None => line,
    }
}

/// The lines of a string (unindexed; [`ParallelString::par_lines`]).
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct Lines<'ch>(&'ch str);

impl<'ch> ParallelIterator for Lines<'ch> {
    type Item = &'ch str;
    fn drive_unindexed<C: UnindexedConsumer<&'ch str>>(self, consumer: C) -> C::Result {
        SplitInclusive {
            chars: self.0,
            separator: '\n',
        }
        .map(strip_line_ending)
        .drive_unindexed(consumer)
    }
}

/// The non-empty substrings between Unicode whitespace (unindexed;
/// [`ParallelString::par_split_whitespace`]).
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct SplitWhitespace<'ch>(&'ch str);

impl<'ch> ParallelIterator for SplitWhitespace<'ch> {
    type Item = &'ch str;
    fn drive_unindexed<C: UnindexedConsumer<&'ch str>>(self, consumer: C) -> C::Result {
        Split {
            chars: self.0,
            separator: char::is_whitespace,
        }
        .filter(|s| !s.is_empty())
        .drive_unindexed(consumer)
    }
}

/// The non-empty substrings between ASCII whitespace (unindexed;
/// [`ParallelString::par_split_ascii_whitespace`]).
#[derive(Debug, Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct SplitAsciiWhitespace<'ch>(&'ch str);

impl<'ch> ParallelIterator for SplitAsciiWhitespace<'ch> {
    type Item = &'ch str;
    fn drive_unindexed<C: UnindexedConsumer<&'ch str>>(self, consumer: C) -> C::Result {
        Split {
            chars: self.0,
            separator: |c: char| c.is_ascii_whitespace(),
        }
        .filter(|s| !s.is_empty())
        .drive_unindexed(consumer)
    }
}
