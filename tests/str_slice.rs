//! `ParallelString` and the slice views added for rayon parity (`par_chunks_exact`,
//! `par_rchunks*`, `par_chunk_by*`, `par_split*`, `par_array_windows`,
//! `par_sort_by_cached_key`) agree with std's sequential methods: empty input, one
//! element, non-ASCII text, every kind of pattern; off any pool, on one worker, on a
//! 2-node virtual pool and on the whole 16-node s1 preset (the node cut of the indexed
//! ones).

use std::sync::OnceLock;

use zonal::prelude::*;
use zonal::runtime::{ThreadPool, ThreadPoolBuilder};

/// One worker; two workers on two nodes; every worker of s1.
fn pools() -> &'static [ThreadPool] {
    static POOLS: OnceLock<Vec<ThreadPool>> = OnceLock::new();
    POOLS.get_or_init(|| {
        let s1 = || ThreadPoolBuilder::new().preset("s1").no_policy();
        vec![
            s1().worker_cpus([0]).build().expect("a virtual pool"),
            s1().worker_cpus([0, 2]).build().expect("a virtual pool"),
            s1().build().expect("a virtual pool"),
        ]
    })
}

/// `f()` off any pool and on each pool: all results equal `expected`.
fn everywhere<R: Send + PartialEq + std::fmt::Debug>(expected: &R, f: impl Fn() -> R + Sync) {
    assert_eq!(&f(), expected, "off any pool");
    for (k, pool) in pools().iter().enumerate() {
        assert_eq!(&pool.install(&f), expected, "on pool {k}");
    }
}

#[test]
fn the_pools_have_the_nodes_the_tests_need() {
    let p = pools();
    assert_eq!(p[0].node_partition(0..100).len(), 1);
    assert_eq!(p[1].node_partition(0..100).len(), 2);
    assert!(p[2].node_partition(0..100).len() > 2);
}

/// Strings: empty, one char, ASCII, non-ASCII (2-, 3- and 4-byte chars), whitespace of
/// every kind, line endings, and a long mixed text (so the splitting really happens).
fn strings() -> Vec<String> {
    let mut v: Vec<String> = [
        "",
        "a",
        "é",
        "🦀",
        "Mary had a little lamb",
        "lionXXtigerXleopard",
        "||||a||b|c",
        "(///)",
        "010",
        "    a  b c",
        "A..B..",
        "foo\r\nbar\n\nbaz\n",
        "foo\nbar\n\r\nbaz",
        "lone\rreturn\r",
        "\n",
        "\r\n\r\n",
        " Mary   had\ta\u{2009}little  \n\t lamb\u{3000}",
        "αβγ,δεζ;ηθι, κλμ",
        "日本語のテキスト、とても長い。🦀🦀 crab 🦀",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let long: String = (0..4000u32)
        .map(|i| match i % 11 {
            0 => ' ',
            1 => '\n',
            2 => 'é',
            3 => '🦀',
            4 => ',',
            5 => '\u{2009}',
            6 => '語',
            _ => char::from(b'a' + (i % 26) as u8),
        })
        .collect();
    v.push(long);
    v.push("x".repeat(5000));
    v.push(",".repeat(3000));
    v
}

#[test]
fn char_wise_iterators_equal_std() {
    for s in strings() {
        let s = s.as_str();
        everywhere(&s.chars().collect::<Vec<_>>(), || s.par_chars().collect());
        everywhere(&s.to_string(), || s.par_chars().collect::<String>());
        everywhere(&s.char_indices().collect::<Vec<_>>(), || {
            s.par_char_indices().collect()
        });
        everywhere(&s.bytes().collect::<Vec<_>>(), || s.par_bytes().collect());
        everywhere(&s.encode_utf16().collect::<Vec<_>>(), || {
            s.par_encode_utf16().collect()
        });
        everywhere(&s.chars().count(), || s.par_chars().count());
    }
}

/// Checks one std method against its parallel form for each pattern kind: a char, a
/// `&[char]`, a `[char; N]`, a `&[char; N]` and a closure.
macro_rules! check_patterns {
    ($s:expr, $sep:expr, $std:ident, $par:ident) => {{
        let s: &str = $s;
        let sep: char = $sep;
        let array = ['\u{0}', sep, '🦀'];
        let array_ref = &array;
        let slice: &[char] = array_ref;
        everywhere(&s.$std(sep).collect::<Vec<_>>(), || s.$par(sep).collect());
        everywhere(&s.$std(slice).collect::<Vec<_>>(), || {
            s.$par(slice).collect()
        });
        everywhere(&s.$std(array).collect::<Vec<_>>(), || {
            s.$par(array).collect()
        });
        everywhere(&s.$std(array_ref).collect::<Vec<_>>(), || {
            s.$par(array_ref).collect()
        });
        everywhere(&s.$std(|c: char| c == sep).collect::<Vec<_>>(), || {
            s.$par(|c: char| c == sep).collect()
        });
    }};
}

#[test]
fn separator_iterators_equal_std_for_every_pattern_kind() {
    for s in strings() {
        for sep in [
            ' ', 'X', '|', '/', '0', '.', '\n', ',', 'é', '🦀', '語', 'a',
        ] {
            check_patterns!(&s, sep, split, par_split);
            check_patterns!(&s, sep, split_inclusive, par_split_inclusive);
            check_patterns!(&s, sep, split_terminator, par_split_terminator);
            check_patterns!(&s, sep, matches, par_matches);
            check_patterns!(&s, sep, match_indices, par_match_indices);
        }
    }
}

#[test]
fn lines_and_whitespace_equal_std() {
    for s in strings() {
        let s = s.as_str();
        everywhere(&s.lines().collect::<Vec<_>>(), || s.par_lines().collect());
        everywhere(&s.split_whitespace().collect::<Vec<_>>(), || {
            s.par_split_whitespace().collect()
        });
        everywhere(&s.split_ascii_whitespace().collect::<Vec<_>>(), || {
            s.par_split_ascii_whitespace().collect()
        });
    }
}

#[test]
fn str_iterators_clone_and_debug() {
    let s = "a,b";
    let split = s.par_split(',');
    let copy = split.clone();
    assert_eq!(copy.collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(split.collect::<Vec<_>>(), ["a", "b"]);
    assert!(format!("{:?}", s.par_chars()).contains("a,b"));
    assert!(format!("{:?}", s.par_lines()).contains("a,b"));
    assert!(format!("{:?}", s.par_matches(['b'])).contains("a,b"));
    let chars = s.par_chars();
    assert_eq!(chars.clone().count(), chars.count());
}

fn slices() -> Vec<Vec<i32>> {
    vec![
        vec![],
        vec![7],
        vec![0],
        vec![0, 0],
        vec![1, 2, 3, 4, 5],
        (0..1000).map(|i| (i * 7919) % 13).collect(),
        (0..3001).map(|i| i / 5).collect(),
        vec![0; 2000],
    ]
}

#[test]
fn exact_and_reverse_chunks_equal_std() {
    for v in slices() {
        let v = v.as_slice();
        for size in [1, 2, 3, 7, 64, 5000] {
            let std_exact: Vec<&[i32]> = v.chunks_exact(size).collect();
            everywhere(&std_exact, || v.par_chunks_exact(size).collect());
            assert_eq!(
                v.par_chunks_exact(size).remainder(),
                v.chunks_exact(size).remainder()
            );
            assert_eq!(v.par_chunks_exact(size).len(), std_exact.len());
            everywhere(&v.rchunks(size).collect::<Vec<_>>(), || {
                v.par_rchunks(size).collect()
            });
            assert_eq!(v.par_rchunks(size).len(), v.rchunks(size).len());
            everywhere(&v.rchunks_exact(size).collect::<Vec<_>>(), || {
                v.par_rchunks_exact(size).collect()
            });
            assert_eq!(
                v.par_rchunks_exact(size).remainder(),
                v.rchunks_exact(size).remainder()
            );
            // Indexed: enumerate and rev see std's order.
            everywhere(&v.rchunks(size).rev().collect::<Vec<_>>(), || {
                v.par_rchunks(size).rev().collect()
            });
            everywhere(
                &v.chunks_exact(size).enumerate().collect::<Vec<_>>(),
                || v.par_chunks_exact(size).enumerate().collect(),
            );
        }
    }
}

/// Tags every item with its chunk's number: the same on `std` and parallel.
fn tag_chunks<'a>(chunks: impl Iterator<Item = &'a mut [i32]>) {
    for (i, c) in chunks.enumerate() {
        for x in c {
            *x = *x * 1000 + i32::try_from(i).expect("small");
        }
    }
}

#[test]
fn mutable_exact_and_reverse_chunks_equal_std() {
    for v in slices() {
        for size in [1, 2, 3, 7, 64, 5000] {
            let mut want = v.clone();
            tag_chunks(want.chunks_exact_mut(size));
            let want_rem = want.chunks_exact_mut(size).into_remainder().to_vec();
            everywhere(&(want.clone(), want_rem.clone()), || {
                let mut got = v.clone();
                got.par_chunks_exact_mut(size)
                    .enumerate()
                    .for_each(|(i, c)| c.iter_mut().for_each(|x| *x = *x * 1000 + i as i32));
                let rem = got.par_chunks_exact_mut(size).into_remainder().to_vec();
                (got, rem)
            });

            let mut want = v.clone();
            tag_chunks(want.rchunks_mut(size));
            everywhere(&want, || {
                let mut got = v.clone();
                got.par_rchunks_mut(size)
                    .enumerate()
                    .for_each(|(i, c)| c.iter_mut().for_each(|x| *x = *x * 1000 + i as i32));
                got
            });

            let mut want = v.clone();
            tag_chunks(want.rchunks_exact_mut(size));
            let want_rem = want.rchunks_exact_mut(size).into_remainder().to_vec();
            everywhere(&(want.clone(), want_rem.clone()), || {
                let mut got = v.clone();
                got.par_rchunks_exact_mut(size)
                    .enumerate()
                    .for_each(|(i, c)| c.iter_mut().for_each(|x| *x = *x * 1000 + i as i32));
                let mut chunks = got.par_rchunks_exact_mut(size);
                assert_eq!(chunks.remainder().len(), v.len() % size);
                let rem = chunks.take_remainder().to_vec();
                assert!(chunks.remainder().is_empty());
                (got, rem)
            });
        }
    }
}

#[test]
fn chunk_by_and_split_equal_std() {
    for v in slices() {
        let v = v.as_slice();
        let eq = |a: &i32, b: &i32| a == b;
        let le = |a: &i32, b: &i32| a <= b;
        everywhere(&v.chunk_by(eq).collect::<Vec<_>>(), || {
            v.par_chunk_by(eq).collect()
        });
        everywhere(&v.chunk_by(le).collect::<Vec<_>>(), || {
            v.par_chunk_by(le).collect()
        });
        for m in [1, 2, 3, 13] {
            let sep = |x: &i32| x % m == 0;
            everywhere(&v.split(sep).collect::<Vec<_>>(), || {
                v.par_split(sep).collect()
            });
            everywhere(&v.split_inclusive(sep).collect::<Vec<_>>(), || {
                v.par_split_inclusive(sep).collect()
            });
        }
    }
}

#[test]
fn mutable_chunk_by_and_split_equal_std() {
    for v in slices() {
        // Each run / piece gets its length added, then reversed.
        let touch = |part: &mut [i32]| {
            let n = i32::try_from(part.len()).expect("small");
            part.iter_mut().for_each(|x| *x += n);
            part.reverse();
        };
        let mut want = v.clone();
        want.chunk_by_mut(|a, b| a == b).for_each(touch);
        everywhere(&want, || {
            let mut got = v.clone();
            got.par_chunk_by_mut(|a, b| a == b).for_each(touch);
            got
        });
        for m in [1, 2, 13] {
            let sep = |x: &i32| x % m == 0;
            let mut want = v.clone();
            want.split_mut(sep).for_each(touch);
            everywhere(&want, || {
                let mut got = v.clone();
                got.par_split_mut(sep).for_each(touch);
                got
            });
            let mut want = v.clone();
            want.split_inclusive_mut(sep).for_each(touch);
            everywhere(&want, || {
                let mut got = v.clone();
                got.par_split_inclusive_mut(sep).for_each(touch);
                got
            });
        }
    }
}

#[test]
fn array_windows_equal_std() {
    for v in slices() {
        let v = v.as_slice();
        let w1: Vec<[i32; 1]> = v.windows(1).map(|w| [w[0]]).collect();
        everywhere(&w1, || v.par_array_windows::<1>().copied().collect());
        let w3: Vec<[i32; 3]> = v.windows(3).map(|w| [w[0], w[1], w[2]]).collect();
        everywhere(&w3, || v.par_array_windows::<3>().copied().collect());
        assert_eq!(v.par_array_windows::<3>().len(), w3.len());
        everywhere(&w3.iter().rev().copied().collect::<Vec<_>>(), || {
            v.par_array_windows::<3>().rev().copied().collect()
        });
    }
}

#[test]
#[should_panic(expected = "window size must be non-zero")]
fn zero_sized_array_windows_panic_when_driven() {
    let _ = [1, 2].par_array_windows::<0>().count();
}

#[test]
#[should_panic(expected = "chunk size must be non-zero")]
fn zero_sized_exact_chunks_panic() {
    let _ = [1, 2].par_chunks_exact(0);
}

#[test]
#[should_panic(expected = "chunk size must be non-zero")]
fn zero_sized_rchunks_panic() {
    let _ = [1, 2].par_rchunks(0);
}

#[test]
fn sort_by_cached_key_is_stable_and_calls_the_key_once_per_element() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    for v in slices() {
        // Pairs (key, position): stability shows in the positions of equal keys.
        let pairs: Vec<(i32, usize)> = v.iter().map(|x| x % 5).zip(0..).collect();
        let mut want = pairs.clone();
        want.sort_by_key(|p| p.0);
        let calls = AtomicUsize::new(0);
        everywhere(&want, || {
            let mut got = pairs.clone();
            got.par_sort_by_cached_key(|p| {
                calls.fetch_add(1, Ordering::Relaxed);
                p.0.to_string()
            });
            got
        });
        let expected_calls = if v.len() < 2 { 0 } else { v.len() * 4 };
        assert_eq!(calls.load(Ordering::Relaxed), expected_calls);
    }
    let mut v = [-5i32, 4, 32, -3, 2];
    v.par_sort_by_cached_key(|k| k.to_string());
    assert_eq!(v, [-3, -5, 2, 32, 4]);
}

#[test]
fn slice_iterators_clone_and_debug() {
    let v = [1, 2, 3, 4, 5];
    let chunks = v.par_chunks(2);
    assert_eq!(chunks.clone().count(), chunks.count());
    let windows = v.par_windows(2);
    assert_eq!(windows.clone().count(), windows.count());
    let exact = v.par_chunks_exact(2);
    assert_eq!(exact.clone().remainder(), &[5]);
    let r = v.par_rchunks_exact(2);
    assert_eq!(r.clone().remainder(), &[1]);
    let split = v.par_split(|x| x % 2 == 0);
    assert_eq!(split.clone().count(), split.count());
    let by = v.par_chunk_by(|a, b| a < b);
    assert_eq!(by.clone().count(), 1);
    let debug = [
        ("ChunksExact", format!("{:?}", v.par_chunks_exact(2))),
        ("RChunks", format!("{:?}", v.par_rchunks(2))),
        ("RChunksExact", format!("{:?}", v.par_rchunks_exact(2))),
        ("ArrayWindows", format!("{:?}", v.par_array_windows::<2>())),
        ("ChunkBy", format!("{:?}", v.par_chunk_by(|a, b| a < b))),
        ("Split", format!("{:?}", v.par_split(|x| *x == 0))),
        (
            "SplitInclusive",
            format!("{:?}", v.par_split_inclusive(|x| *x == 0)),
        ),
    ];
    for (name, d) in &debug {
        assert!(d.starts_with(name), "{d}");
        assert!(d.contains("2, 3, 4"), "{d}");
    }
    let mut m = [1, 2, 3];
    assert!(format!("{:?}", m.par_split_mut(|x| *x == 0)).contains("SplitMut"));
    assert!(format!("{:?}", m.par_chunk_by_mut(|a, b| a < b)).contains("ChunkByMut"));
    assert!(format!("{:?}", m.par_rchunks_exact_mut(2)).contains("RChunksExactMut"));
}

#[test]
fn rayon_names_are_reachable() {
    let v = [1, 2, 3];
    let _: zonal::slice::Iter<'_, i32> = v.par_iter();
    let _: zonal::slice::Chunks<'_, i32> = v.par_chunks(1);
    let _: zonal::slice::Windows<'_, i32> = v.par_windows(1);
    let _: zonal::slice::ChunksExact<'_, i32> = v.par_chunks_exact(1);
    let _: zonal::slice::RChunks<'_, i32> = v.par_rchunks(1);
    let _: zonal::slice::RChunksExact<'_, i32> = v.par_rchunks_exact(1);
    let _: zonal::slice::ArrayWindows<'_, i32, 2> = v.par_array_windows();
    let s = "ab";
    let _: zonal::str::Chars<'_> = s.par_chars();
    let _: zonal::str::CharIndices<'_> = s.par_char_indices();
    let _: zonal::str::Bytes<'_> = s.par_bytes();
    let _: zonal::str::EncodeUtf16<'_> = s.par_encode_utf16();
    let _: zonal::str::Split<'_, char> = s.par_split('a');
    let _: zonal::str::SplitInclusive<'_, char> = s.par_split_inclusive('a');
    let _: zonal::str::SplitTerminator<'_, char> = s.par_split_terminator('a');
    let _: zonal::str::Lines<'_> = s.par_lines();
    let _: zonal::str::SplitWhitespace<'_> = s.par_split_whitespace();
    let _: zonal::str::SplitAsciiWhitespace<'_> = s.par_split_ascii_whitespace();
    let _: zonal::str::Matches<'_, [char; 1]> = s.par_matches(['a']);
    let _: zonal::str::MatchIndices<'_, &[char]> = s.par_match_indices(&['a'][..]);
}

#[test]
fn long_inputs_really_split() {
    // `fold` makes one accumulator per piece run sequentially: more than one means the
    // producer split (at a char boundary, a separator, or between runs).
    let s: String = "ab語🦀 ,".repeat(2000);
    let v: Vec<i32> = (0..4000).map(|i| i / 3).collect();
    for pool in &pools()[1..] {
        pool.install(|| {
            let pieces = |n: usize| assert!(n > 1, "{n} piece(s)");
            pieces(s.par_chars().fold(|| 0, |a, _| a + 1).count());
            pieces(s.par_split(',').fold(|| 0, |a, _| a + 1).count());
            pieces(s.par_split_inclusive(' ').fold(|| 0, |a, _| a + 1).count());
            pieces(
                v.par_chunk_by(|a, b| a == b)
                    .fold(|| 0, |a, _| a + 1)
                    .count(),
            );
            pieces(v.par_split(|x| x % 7 == 0).fold(|| 0, |a, _| a + 1).count());
            // And the pieces' items add up.
            let total: usize = s.par_chars().fold(|| 0, |a, _| a + 1).sum();
            assert_eq!(total, s.chars().count());
        });
    }
}

#[test]
fn char_ranges_equal_std_and_skip_surrogates() {
    let cases = [
        ('a', 'z'),
        ('a', 'a'),
        ('z', 'a'),
        ('\u{D7F9}', '\u{E007}'),
        ('\u{D7FF}', '\u{E000}'),
        ('\0', char::MAX),
        ('é', '🦀'),
    ];
    for (lo, hi) in cases {
        let want: Vec<char> = (lo..hi).collect();
        everywhere(&want, || (lo..hi).into_par_iter().collect());
        assert_eq!((lo..hi).into_par_iter().len(), want.len());
        let want: Vec<char> = (lo..=hi).collect();
        everywhere(&want, || (lo..=hi).into_par_iter().collect());
        everywhere(&want.iter().rev().copied().collect::<Vec<_>>(), || {
            (lo..=hi).into_par_iter().rev().collect()
        });
    }
    let mut exhausted = 'a'..='b';
    exhausted.by_ref().for_each(drop);
    assert_eq!(exhausted.into_par_iter().count(), 0);
}

#[test]
fn boxed_slices_are_parallel_iterators() {
    let mut b: Box<[i32]> = (0..100).collect();
    let sum: i32 = (&b).into_par_iter().sum();
    assert_eq!(sum, 4950);
    (&mut b).into_par_iter().for_each(|x| *x *= 2);
    assert_eq!(b.par_iter().sum::<i32>(), 9900);
    b.par_iter_mut().for_each(|x| *x += 1);
    assert_eq!(b[..3], [1, 3, 5]);
}
