//! The JSON layout of [`TopologyReport`](super::TopologyReport): indented like
//! serde_json's pretty printer, but with every array of scalars on one line, as in
//! `crates/topology/tests/data/expected.json` — a span is one line, not one line per node id.
//!
//! It is a streaming [`Formatter`]: a 1024-node report (hundreds of MB) is written without
//! being held in memory. An array's layout is decided by its first element: a scalar starts
//! an inline array, an array or object a block.

use std::io;

use serde_json::ser::{CompactFormatter, Formatter};

#[derive(Debug)]
struct Frame {
    /// `None` until the first element decides; `Some(true)` for one element per line.
    block: Option<bool>,
    /// No element or key written yet.
    empty: bool,
}

/// Pretty JSON with arrays of scalars kept on one line.
#[derive(Debug, Default)]
pub(crate) struct LineArrays {
    stack: Vec<Frame>,
    /// Set between `begin_array_value(first)` and the start of that element.
    pending: Option<bool>,
    in_key: bool,
}

impl LineArrays {
    fn newline<W: ?Sized + io::Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.stack.len() {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    /// Writes what goes before an array element, once its kind is known.
    fn value_start<W: ?Sized + io::Write>(&mut self, w: &mut W, composite: bool) -> io::Result<()> {
        let Some(first) = self.pending.take() else {
            return Ok(());
        };
        let block = match self.stack.last_mut() {
            Some(frame) => {
                frame.empty = false;
                *frame.block.get_or_insert(composite)
            }
            None => false,
        };
        if block {
            if !first {
                w.write_all(b",")?;
            }
            self.newline(w)
        } else if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
}

macro_rules! scalars {
    ($($name:ident($t:ty)),* $(,)?) => {$(
        fn $name<W>(&mut self, w: &mut W, value: $t) -> io::Result<()>
        where
            W: ?Sized + io::Write,
        {
            self.value_start(w, false)?;
            CompactFormatter.$name(w, value)
        }
    )*};
}

impl Formatter for LineArrays {
    scalars!(
        write_bool(bool),
        write_i8(i8),
        write_i16(i16),
        write_i32(i32),
        write_i64(i64),
        write_i128(i128),
        write_u8(u8),
        write_u16(u16),
        write_u32(u32),
        write_u64(u64),
        write_u128(u128),
        write_f32(f32),
        write_f64(f64),
        write_number_str(&str),
        write_byte_array(&[u8]),
        write_raw_fragment(&str),
    );

    fn write_null<W>(&mut self, w: &mut W) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        self.value_start(w, false)?;
        w.write_all(b"null")
    }

    fn begin_string<W>(&mut self, w: &mut W) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        if !self.in_key {
            self.value_start(w, false)?;
        }
        w.write_all(b"\"")
    }

    fn begin_array<W>(&mut self, w: &mut W) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        self.value_start(w, true)?;
        self.stack.push(Frame {
            block: None,
            empty: true,
        });
        w.write_all(b"[")
    }

    fn end_array<W>(&mut self, w: &mut W) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        let frame = self.stack.pop();
        if frame.is_some_and(|f| f.block == Some(true) && !f.empty) {
            self.newline(w)?;
        }
        w.write_all(b"]")
    }

    fn begin_array_value<W>(&mut self, _w: &mut W, first: bool) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        self.pending = Some(first);
        Ok(())
    }

    fn begin_object<W>(&mut self, w: &mut W) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        self.value_start(w, true)?;
        self.stack.push(Frame {
            block: Some(true),
            empty: true,
        });
        w.write_all(b"{")
    }

    fn end_object<W>(&mut self, w: &mut W) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        let frame = self.stack.pop();
        if frame.is_some_and(|f| !f.empty) {
            self.newline(w)?;
        }
        w.write_all(b"}")
    }

    fn begin_object_key<W>(&mut self, w: &mut W, first: bool) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        if let Some(frame) = self.stack.last_mut() {
            frame.empty = false;
        }
        if !first {
            w.write_all(b",")?;
        }
        self.in_key = true;
        self.newline(w)
    }

    fn end_object_key<W>(&mut self, _w: &mut W) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        self.in_key = false;
        Ok(())
    }

    fn begin_object_value<W>(&mut self, w: &mut W) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        w.write_all(b": ")
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use serde::Serialize as _;

    fn render(v: &serde_json::Value) -> String {
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, LineArrays::default());
        v.serialize(&mut ser).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn scalar_arrays_stay_on_one_line() {
        let v = serde_json::json!({
            "a": [1, 2, 3],
            "b": [[0], [], [1, 2]],
            "c": {},
            "d": [],
            "e": "s [x], {y}",
            "f": [{"k": null}, {"k": true}],
            "g": ["x", 1.5],
        });
        let text = render(&v);
        assert_eq!(
            text,
            r#"{
  "a": [1, 2, 3],
  "b": [
    [0],
    [],
    [1, 2]
  ],
  "c": {},
  "d": [],
  "e": "s [x], {y}",
  "f": [
    {
      "k": null
    },
    {
      "k": true
    }
  ],
  "g": ["x", 1.5]
}"#
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
        // Mixed arrays stay valid JSON, whatever their layout.
        let mixed = serde_json::json!([1, [2, [3]], {"x": [4]}]);
        let back: serde_json::Value = serde_json::from_str(&render(&mixed)).unwrap();
        assert_eq!(back, mixed);
    }
}
