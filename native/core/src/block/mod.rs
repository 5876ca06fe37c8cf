//! The column-at-a-time encoder: the positional records (docs/FORMAT.md, section 3) of a block of rows in
//! one buffer, as arrow-row lays out rows, with [`SLACK`] bytes after each. First every row's length (each column adds its values'
//! lengths), then each column writes its values at each row's cursor: the type dispatch happens once per
//! column per block instead of once per value, and the buffer grows once per block instead of being checked
//! at every value. A nested column does the same for its children over the indices of its elements
//! ([`nested`]). The bytes are those of [`Node::encode`] row by row; the tests compare the two on generated
//! data of every type.

mod nested;
#[cfg(test)]
mod tests;

use arrow_buffer::ArrowNativeType;
use arrow_schema::TimeUnit;

use crate::column::{micros, view_bytes, Node, Nulls, MICROS_PER_DAY_MS};
use crate::encode::*;
use nested::Chain;

/// Which values of a node a pass covers: `len()` of them, the `k`th at index `at(k)` of the node.
pub(crate) trait Rows: Copy {
    fn len(self) -> usize;
    fn at(self, k: usize) -> usize;
    /// The first index, when the indices are consecutive.
    fn start(self) -> Option<usize>;
}

/// Consecutive indices: the rows of a block.
#[derive(Clone, Copy)]
pub(crate) struct Run {
    start: usize,
    len: usize,
}

impl Rows for Run {
    #[inline(always)]
    fn len(self) -> usize {
        self.len
    }

    #[inline(always)]
    fn at(self, k: usize) -> usize {
        self.start + k
    }

    #[inline(always)]
    fn start(self) -> Option<usize> {
        Some(self.start)
    }
}

/// Gathered indices: the elements of lists, the non-NULL rows of a struct, a dictionary's keys.
impl Rows for &[usize] {
    #[inline(always)]
    fn len(self) -> usize {
        <[usize]>::len(self)
    }

    #[inline(always)]
    fn at(self, k: usize) -> usize {
        self[k]
    }

    #[inline(always)]
    fn start(self) -> Option<usize> {
        None
    }
}

/// The bytes left free after each record of a block. A short value is written as a whole 32-byte chunk
/// whatever its length, so that values of varying lengths take one branch: what it writes past its end is
/// overwritten by the row's later values, or falls here. The hash reads a record's tail as one 16-byte load
/// that may reach here too, and masks what it does not hash.
pub(crate) const SLACK: usize = 32;

/// The records of a block of rows, in a buffer reused from block to block.
#[derive(Default)]
pub struct Block {
    ctx: Ctx,
    bytes: Vec<u8>,
    /// Where each row's record starts and ends; [`SLACK`] bytes separate a record from the next.
    starts: Vec<usize>,
    ends: Vec<usize>,
    cursors: Vec<usize>,
}

impl Block {
    /// A buffer for records under an algorithm whose maps are sums (`sorted_maps` false) or sorted digests.
    pub fn new(sorted_maps: bool) -> Self {
        Self {
            ctx: Ctx {
                sorted: sorted_maps,
                ..Ctx::default()
            },
            ..Self::default()
        }
    }

    /// Encodes the positional records of rows `start..start + len` of `columns`; [`Self::record`]`(k)` is
    /// then the record of row `start + k`.
    pub fn positional(&mut self, columns: &[Node], start: usize, len: usize) {
        let rows = Run { start, len };
        self.ctx.forget_sizes();
        // The record's header (the format version and the column count) and the columns whose every value
        // has one length; then each other column's values.
        let fixed: usize = columns.iter().filter_map(nested::fixed_width).sum();
        let sizes = &mut self.cursors;
        sizes.clear();
        sizes.resize(len, 5 + fixed);
        for column in columns {
            if nested::fixed_width(column).is_none() {
                size(column, rows, sizes, &mut self.ctx);
            }
        }
        // Each row's size becomes its start: the cursor its columns write from.
        self.starts.clear();
        self.ends.clear();
        let mut end = 0;
        for size in sizes.iter_mut() {
            let start = end;
            end += *size;
            self.starts.push(start);
            self.ends.push(end);
            *size = start;
            end += SLACK;
        }
        // Every byte of every record is written below (a slack's bytes are never hashed): the buffer only
        // grows, and is never cleared.
        if self.bytes.len() < end {
            self.bytes.resize(end, 0);
        }
        let (out, cursors) = (&mut self.bytes[..end], &mut self.cursors);
        let header = {
            let mut header = [FORMAT_VERSION; 5];
            header[1..].copy_from_slice(&(columns.len() as u32).to_le_bytes());
            header
        };
        for cursor in cursors.iter_mut() {
            put(out, cursor, header);
        }
        // The cursors are the rows': a value's overspill lands in its own row or its slack.
        self.ctx.spill = true;
        for column in columns {
            write(column, rows, out, cursors, &mut self.ctx);
        }
        // Each row's columns wrote as many bytes as they sized: a disagreement is a bug, never a wrong hash.
        assert!(
            cursors.iter().eq(&self.ends),
            "a record's encoding is not the size it was given"
        );
    }

    /// The record of the `k`th row of the block.
    #[inline(always)]
    pub fn record(&self, k: usize) -> &[u8] {
        &self.bytes[self.starts[k]..self.ends[k]]
    }

    /// The record of the `k`th row followed by 16 bytes of its slack, and the record's length.
    #[inline(always)]
    pub fn padded(&self, k: usize) -> (&[u8], usize) {
        let (start, end) = (self.starts[k], self.ends[k]);
        (&self.bytes[start..end + 16], end - start)
    }
}

/// What the passes over a block share: whether maps are sorted digests, and index and byte buffers that
/// nested columns take and give back, so that a block allocates nothing once the first few are done.
#[derive(Default)]
pub(crate) struct Ctx {
    sorted: bool,
    /// Whether a value may write up to [`SLACK`] bytes past its end: where the cursors are a block's rows'
    /// (their row's later values overwrite what it writes, or its slack takes it), not where they are the
    /// elements of lists or maps (the next element may already be written).
    spill: bool,
    indices: Vec<Vec<usize>>,
    bytes: Vec<Vec<u8>>,
    /// The sizes of a list's elements, from the size pass, for the write pass: by the list's child and the
    /// rows of the list (their count, first and last), which are the same in both passes.
    sizes: Vec<(SizesKey, Vec<usize>)>,
}

type SizesKey = (*const Node, usize, usize, usize);

impl Ctx {
    /// An empty index buffer.
    fn indices(&mut self) -> Vec<usize> {
        let mut buffer = self.indices.pop().unwrap_or_default();
        buffer.clear();
        buffer
    }

    /// `len` zeros.
    fn zeros(&mut self, len: usize) -> Vec<usize> {
        let mut buffer = self.indices();
        buffer.resize(len, 0);
        buffer
    }

    fn give(&mut self, buffer: Vec<usize>) {
        self.indices.push(buffer);
    }

    fn sizes_key<R: Rows>(child: &Node, rows: R) -> SizesKey {
        let len = rows.len();
        match len {
            0 => (child, 0, 0, 0),
            _ => (child, len, rows.at(0), rows.at(len - 1)),
        }
    }

    /// Keeps the sizes of `child`'s values under a list's `rows` for the write pass.
    fn keep_sizes<R: Rows>(&mut self, child: &Node, rows: R, sizes: Vec<usize>) {
        self.sizes.push((Self::sizes_key(child, rows), sizes));
    }

    /// The sizes kept by [`Self::keep_sizes`] for `child` under `rows`, if any.
    fn kept_sizes<R: Rows>(&mut self, child: &Node, rows: R) -> Option<Vec<usize>> {
        let key = Self::sizes_key(child, rows);
        let at = self.sizes.iter().rposition(|(k, _)| *k == key)?;
        Some(self.sizes.swap_remove(at).1)
    }

    /// Forgets the sizes kept for the last block.
    fn forget_sizes(&mut self) {
        while let Some((_, sizes)) = self.sizes.pop() {
            self.indices.push(sizes);
        }
    }

    fn bytes(&mut self) -> Vec<u8> {
        self.bytes.pop().unwrap_or_default()
    }

    fn give_bytes(&mut self, buffer: Vec<u8>) {
        self.bytes.push(buffer);
    }
}

/// Each value's length: `$len` (of the row `$r`) for a value, one for a NULL.
macro_rules! sizes {
    ($nulls:expr, $rows:expr, $sizes:expr, |$r:ident| $len:expr) => {
        match $nulls.buffer() {
            None => {
                for (k, s) in $sizes.iter_mut().enumerate() {
                    let $r = $rows.at(k);
                    *s += $len;
                }
            }
            Some(n) => {
                for (k, s) in $sizes.iter_mut().enumerate() {
                    let $r = $rows.at(k);
                    *s += if n.is_null($r) { 1 } else { $len };
                }
            }
        }
    };
}

/// Writes each value with `$write` (of the row `$r`, at the cursor `$c`); a NULL as its tag. A macro rather
/// than a function taking a closure, so that the write is inlined in both loops.
macro_rules! values {
    ($nulls:expr, $rows:expr, $out:expr, $cursors:expr, |$r:ident, $c:ident| $write:expr) => {
        match $nulls.buffer() {
            None => {
                for (k, $c) in $cursors.iter_mut().enumerate() {
                    let $r = $rows.at(k);
                    $write;
                }
            }
            Some(n) => {
                for (k, $c) in $cursors.iter_mut().enumerate() {
                    let $r = $rows.at(k);
                    if n.is_null($r) {
                        put($out, $c, [NULL]);
                    } else {
                        $write;
                    }
                }
            }
        }
    };
}

/// Adds to `sizes[k]` the length of the encoding of value `rows.at(k)` of `node`.
pub(crate) fn size<R: Rows>(node: &Node, rows: R, sizes: &mut [usize], ctx: &mut Ctx) {
    let sizes = &mut sizes[..rows.len()];
    match node {
        Node::Null => sizes.iter_mut().for_each(|s| *s += 1),
        Node::Boolean(n, _) => sizes!(n, rows, sizes, |_r| 2),
        Node::Int8(n, _)
        | Node::Int16(n, _)
        | Node::Int32(n, _)
        | Node::Int64(n, _)
        | Node::UInt8(n, _)
        | Node::UInt16(n, _)
        | Node::UInt32(n, _)
        | Node::Float32(n, _)
        | Node::Float64(n, _)
        | Node::Timestamp(_, n, _, _) => sizes!(n, rows, sizes, |_r| 9),
        Node::Date32(n, _) | Node::Date64(n, _) => sizes!(n, rows, sizes, |_r| 5),
        Node::UInt64(n, v) => sizes!(n, rows, sizes, |r| decimal_len(i128::from(v[r]), 0)),
        Node::Decimal32(n, v, s) => {
            sizes!(n, rows, sizes, |r| small_decimal_len(i64::from(v[r]), *s))
        }
        Node::Decimal64(n, v, s) => sizes!(n, rows, sizes, |r| small_decimal_len(v[r], *s)),
        Node::Decimal128(n, v, s) => sizes!(n, rows, sizes, |r| match i64::try_from(v[r]) {
            Ok(small) => small_decimal_len(small, *s),
            Err(_) => decimal_len(v[r], *s),
        }),
        Node::Decimal256(n, v, s) => sizes!(n, rows, sizes, |r| decimal_len(v[r].as_i128(), *s)),
        Node::Bytes(_, n, offsets, _) => {
            let offsets: &[i32] = offsets;
            sizes!(n, rows, sizes, |r| 5
                + (offsets[r + 1] - offsets[r]) as usize)
        }
        Node::LargeBytes(_, n, offsets, _) => {
            let offsets: &[i64] = offsets;
            sizes!(n, rows, sizes, |r| 5
                + (offsets[r + 1] - offsets[r]) as usize)
        }
        Node::View(_, n, views, _) => sizes!(n, rows, sizes, |r| 5 + views[r] as u32 as usize),
        Node::FixedBytes(n, a) => {
            let width = 5 + a.value_length() as usize;
            sizes!(n, rows, sizes, |_r| width)
        }
        Node::List(n, offsets, child) => {
            let offsets: &[i32] = offsets;
            nested::list_size(
                n,
                rows,
                sizes,
                Chain::Offsets,
                |r| (offsets[r] as usize, offsets[r + 1] as usize),
                child,
                ctx,
            )
        }
        Node::LargeList(n, offsets, child) => {
            let offsets: &[i64] = offsets;
            nested::list_size(
                n,
                rows,
                sizes,
                Chain::Offsets,
                |r| (offsets[r] as usize, offsets[r + 1] as usize),
                child,
                ctx,
            )
        }
        Node::ListView(n, offsets, lengths, child) => nested::list_size(
            n,
            rows,
            sizes,
            Chain::Views,
            |r| (offsets[r] as usize, (offsets[r] + lengths[r]) as usize),
            child,
            ctx,
        ),
        Node::LargeListView(n, offsets, lengths, child) => nested::list_size(
            n,
            rows,
            sizes,
            Chain::Views,
            |r| (offsets[r] as usize, (offsets[r] + lengths[r]) as usize),
            child,
            ctx,
        ),
        Node::FixedList(n, width, child) => nested::list_size(
            n,
            rows,
            sizes,
            Chain::Offsets,
            |r| (r * width, (r + 1) * width),
            child,
            ctx,
        ),
        Node::Map(n, offsets, _, _) => {
            let offsets: &[i32] = offsets;
            if ctx.sorted {
                // Each entry's SHA-256 digest.
                sizes!(n, rows, sizes, |r| 5 + 32
                    * (offsets[r + 1] - offsets[r]) as usize)
            } else {
                // The 16-byte sum of the entries' digests.
                sizes!(n, rows, sizes, |_r| 5 + 16)
            }
        }
        Node::Struct(n, fields) => nested::struct_size(n, rows, sizes, fields, ctx),
        Node::Dictionary(n, keys, values) => {
            nested::dictionary_size(n, rows, sizes, keys, values, ctx)
        }
    }
}

/// Writes the encoding of value `rows.at(k)` of `node` at `out[cursors[k]..]`, and moves `cursors[k]` past it.
pub(crate) fn write<R: Rows>(
    node: &Node,
    rows: R,
    out: &mut [u8],
    cursors: &mut [usize],
    ctx: &mut Ctx,
) {
    let cursors = &mut cursors[..rows.len()];
    match node {
        Node::Null => cursors.iter_mut().for_each(|c| put(out, c, [NULL])),
        Node::Boolean(n, v) => values!(n, rows, out, cursors, |r, c| put(
            out,
            c,
            [BOOLEAN, u8::from(v.value(r))]
        )),
        Node::Int8(n, v) => values!(n, rows, out, cursors, |r, c| put(
            out,
            c,
            integral(i64::from(v[r]))
        )),
        Node::Int16(n, v) => values!(n, rows, out, cursors, |r, c| put(
            out,
            c,
            integral(i64::from(v[r]))
        )),
        Node::Int32(n, v) => values!(n, rows, out, cursors, |r, c| put(
            out,
            c,
            integral(i64::from(v[r]))
        )),
        Node::Int64(n, v) => values!(n, rows, out, cursors, |r, c| put(out, c, integral(v[r]))),
        Node::UInt8(n, v) => values!(n, rows, out, cursors, |r, c| put(
            out,
            c,
            integral(i64::from(v[r]))
        )),
        Node::UInt16(n, v) => values!(n, rows, out, cursors, |r, c| put(
            out,
            c,
            integral(i64::from(v[r]))
        )),
        Node::UInt32(n, v) => values!(n, rows, out, cursors, |r, c| put(
            out,
            c,
            integral(i64::from(v[r]))
        )),
        Node::UInt64(n, v) => values!(n, rows, out, cursors, |r, c| decimal(
            out,
            c,
            i128::from(v[r]),
            0
        )),
        Node::Float32(n, v) => values!(n, rows, out, cursors, |r, c| {
            put(out, c, nine(FLOATING, double_bits(f64::from(v[r])) as i64))
        }),
        Node::Float64(n, v) => {
            values!(n, rows, out, cursors, |r, c| put(
                out,
                c,
                nine(FLOATING, double_bits(v[r]) as i64)
            ))
        }
        Node::Decimal32(n, v, s) => {
            let spill = ctx.spill;
            values!(n, rows, out, cursors, |r, c| small_decimal(
                out,
                c,
                i64::from(v[r]),
                *s,
                spill
            ))
        }
        Node::Decimal64(n, v, s) => {
            let spill = ctx.spill;
            values!(n, rows, out, cursors, |r, c| small_decimal(
                out, c, v[r], *s, spill
            ))
        }
        Node::Decimal128(n, v, s) => {
            let spill = ctx.spill;
            values!(n, rows, out, cursors, |r, c| match i64::try_from(v[r]) {
                Ok(small) => small_decimal(out, c, small, *s, spill),
                Err(_) => decimal(out, c, v[r], *s),
            })
        }
        Node::Decimal256(n, v, s) => values!(n, rows, out, cursors, |r, c| decimal(
            out,
            c,
            v[r].as_i128(),
            *s
        )),
        Node::Bytes(tag, n, offsets, data) => {
            offset_bytes(n, rows, out, cursors, *tag, offsets, data, ctx.spill)
        }
        Node::LargeBytes(tag, n, offsets, data) => {
            offset_bytes(n, rows, out, cursors, *tag, offsets, data, ctx.spill)
        }
        Node::View(tag, n, views, buffers) => {
            values!(n, rows, out, cursors, |r, c| bytes(
                out,
                c,
                *tag,
                view_bytes(views, r, buffers)
            ))
        }
        Node::FixedBytes(n, a) => values!(n, rows, out, cursors, |r, c| bytes(
            out,
            c,
            BINARY,
            a.value(r)
        )),
        Node::Date32(n, v) => values!(n, rows, out, cursors, |r, c| put(out, c, five(DATE, v[r]))),
        Node::Date64(n, v) => {
            values!(n, rows, out, cursors, |r, c| put(
                out,
                c,
                five(DATE, (v[r] / MICROS_PER_DAY_MS) as i32)
            ))
        }
        // One loop per unit, so that the conversion is a constant multiplication or none.
        Node::Timestamp(tag, n, v, unit) => match unit {
            TimeUnit::Second => values!(n, rows, out, cursors, |r, c| {
                put(out, c, nine(*tag, micros(v[r], &TimeUnit::Second)))
            }),
            TimeUnit::Millisecond => values!(n, rows, out, cursors, |r, c| {
                put(out, c, nine(*tag, micros(v[r], &TimeUnit::Millisecond)))
            }),
            TimeUnit::Microsecond => {
                values!(n, rows, out, cursors, |r, c| put(out, c, nine(*tag, v[r])))
            }
            TimeUnit::Nanosecond => values!(n, rows, out, cursors, |r, c| {
                put(out, c, nine(*tag, micros(v[r], &TimeUnit::Nanosecond)))
            }),
        },
        Node::List(n, offsets, child) => {
            let offsets: &[i32] = offsets;
            nested::list_write(
                n,
                rows,
                out,
                cursors,
                Chain::Offsets,
                |r| (offsets[r] as usize, offsets[r + 1] as usize),
                child,
                ctx,
            )
        }
        Node::LargeList(n, offsets, child) => {
            let offsets: &[i64] = offsets;
            nested::list_write(
                n,
                rows,
                out,
                cursors,
                Chain::Offsets,
                |r| (offsets[r] as usize, offsets[r + 1] as usize),
                child,
                ctx,
            )
        }
        Node::ListView(n, offsets, lengths, child) => nested::list_write(
            n,
            rows,
            out,
            cursors,
            Chain::Views,
            |r| (offsets[r] as usize, (offsets[r] + lengths[r]) as usize),
            child,
            ctx,
        ),
        Node::LargeListView(n, offsets, lengths, child) => nested::list_write(
            n,
            rows,
            out,
            cursors,
            Chain::Views,
            |r| (offsets[r] as usize, (offsets[r] + lengths[r]) as usize),
            child,
            ctx,
        ),
        Node::FixedList(n, width, child) => nested::list_write(
            n,
            rows,
            out,
            cursors,
            Chain::Offsets,
            |r| (r * width, (r + 1) * width),
            child,
            ctx,
        ),
        Node::Map(n, offsets, keys, values) => {
            nested::map_write(n, rows, out, cursors, offsets, keys, values, ctx)
        }
        Node::Struct(n, fields) => nested::struct_write(n, rows, out, cursors, fields, ctx),
        Node::Dictionary(n, keys, values) => {
            nested::dictionary_write(n, rows, out, cursors, keys, values, ctx)
        }
    }
}

/// STRING or BINARY values by their offsets (32- or 64-bit) into `data`; with `spill`, as [`spilled_bytes`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn offset_bytes<R: Rows, O: ArrowNativeType>(
    nulls: &Nulls,
    rows: R,
    out: &mut [u8],
    cursors: &mut [usize],
    tag: u8,
    offsets: &[O],
    data: &[u8],
    spill: bool,
) {
    let range = |r: usize| (offsets[r].as_usize(), offsets[r + 1].as_usize());
    if spill {
        values!(nulls, rows, out, cursors, |r, c| {
            let (start, end) = range(r);
            spilled_bytes(out, c, tag, data, start, end)
        })
    } else {
        values!(nulls, rows, out, cursors, |r, c| {
            let (start, end) = range(r);
            bytes(out, c, tag, &data[start..end])
        })
    }
}

/// Writes `bytes` at `out[*cursor..]` and moves the cursor past them.
#[inline(always)]
pub(crate) fn put<const W: usize>(out: &mut [u8], cursor: &mut usize, bytes: [u8; W]) {
    assert!(*cursor + W <= out.len());
    // SAFETY: the assertion keeps the W bytes written inside `out`.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr().add(*cursor), W) };
    *cursor += W;
}

/// Writes all `W` bytes at `out[*cursor..]` but moves the cursor past the first `len` only: the rest is
/// overspill (see [`SLACK`]).
#[inline(always)]
fn put_part<const W: usize>(out: &mut [u8], cursor: &mut usize, bytes: [u8; W], len: usize) {
    debug_assert!(len <= W);
    put(out, &mut { *cursor }, bytes);
    *cursor += len;
}

/// [`bytes`] of `data[start..end]`, where the cursor may write up to [`SLACK`] bytes past the value: a value
/// of at most 32 bytes (most) is copied as two 16-byte chunks whatever its length, so that values of varying
/// lengths take the same branch instead of mispredicting one every few rows.
#[inline(always)]
fn spilled_bytes(
    out: &mut [u8],
    cursor: &mut usize,
    tag: u8,
    data: &[u8],
    start: usize,
    end: usize,
) {
    let n = end - start;
    let mut header = [tag; 5];
    header[1..].copy_from_slice(&(n as u32).to_le_bytes());
    put(out, cursor, header);
    if n <= 32 && start + 32 <= data.len() && *cursor + 32 <= out.len() {
        // SAFETY: the conditions keep both 16-byte loads inside `data` and both stores inside `out`.
        unsafe {
            let (from, to) = (data.as_ptr().add(start), out.as_mut_ptr().add(*cursor));
            let (a, b) = (
                from.cast::<[u8; 16]>().read_unaligned(),
                from.add(16).cast::<[u8; 16]>().read_unaligned(),
            );
            to.cast::<[u8; 16]>().write_unaligned(a);
            to.add(16).cast::<[u8; 16]>().write_unaligned(b);
        }
        *cursor += n;
    } else {
        copy(out, cursor, &data[start..end]);
    }
}

/// Copies `value` to `out[*cursor..]` and moves the cursor past it; short values (most strings) by two
/// overlapping loads and stores instead of a call to `memcpy`.
#[inline(always)]
fn copy(out: &mut [u8], cursor: &mut usize, value: &[u8]) {
    let n = value.len();
    assert!(*cursor + n <= out.len());
    // SAFETY: the assertion keeps the n bytes written inside `out`; each load below reads inside `value`
    // (n bytes), each store inside the n bytes at the cursor.
    unsafe {
        let (from, to) = (value.as_ptr(), out.as_mut_ptr().add(*cursor));
        if n > 32 {
            std::ptr::copy_nonoverlapping(from, to, n);
        } else if n >= 16 {
            let (a, b) = (
                from.cast::<[u8; 16]>().read_unaligned(),
                from.add(n - 16).cast::<[u8; 16]>().read_unaligned(),
            );
            to.cast::<[u8; 16]>().write_unaligned(a);
            to.add(n - 16).cast::<[u8; 16]>().write_unaligned(b);
        } else if n >= 8 {
            let (a, b) = (
                from.cast::<u64>().read_unaligned(),
                from.add(n - 8).cast::<u64>().read_unaligned(),
            );
            to.cast::<u64>().write_unaligned(a);
            to.add(n - 8).cast::<u64>().write_unaligned(b);
        } else if n >= 4 {
            let (a, b) = (
                from.cast::<u32>().read_unaligned(),
                from.add(n - 4).cast::<u32>().read_unaligned(),
            );
            to.cast::<u32>().write_unaligned(a);
            to.add(n - 4).cast::<u32>().write_unaligned(b);
        } else {
            for i in 0..n {
                *to.add(i) = *from.add(i);
            }
        }
    }
    *cursor += n;
}

#[inline(always)]
fn nine(tag: u8, value: i64) -> [u8; 9] {
    let mut bytes = [tag; 9];
    bytes[1..].copy_from_slice(&value.to_le_bytes());
    bytes
}

#[inline(always)]
fn integral(value: i64) -> [u8; 9] {
    nine(INTEGRAL, value)
}

#[inline(always)]
fn five(tag: u8, value: i32) -> [u8; 5] {
    let mut bytes = [tag; 5];
    bytes[1..].copy_from_slice(&value.to_le_bytes());
    bytes
}

/// A STRING or BINARY value: the tag, `u32(len)` and the bytes.
#[inline(always)]
pub(crate) fn bytes(out: &mut [u8], cursor: &mut usize, tag: u8, value: &[u8]) {
    let mut header = [tag; 5];
    header[1..].copy_from_slice(&(value.len() as u32).to_le_bytes());
    put(out, cursor, header);
    copy(out, cursor, value);
}

#[inline(always)]
fn decimal(out: &mut [u8], cursor: &mut usize, unscaled: i128, scale: i8) {
    let (bytes, len) = decimal_encoding(unscaled, scale);
    copy(out, cursor, &bytes[..len]);
}

/// A DECIMAL whose unscaled value fits 64 bits (most do): the same bytes as [`decimal`], in 64-bit arithmetic.
/// With `spill`, all 8 bytes of the unscaled value are written and the cursor moves past the `size` that count.
#[inline(always)]
fn small_decimal(out: &mut [u8], cursor: &mut usize, unscaled: i64, scale: i8, spill: bool) {
    let (unscaled, scale) = normalise_small_decimal(unscaled, scale);
    let size = small_decimal_size(unscaled);
    if spill {
        let mut value = [DECIMAL; 14];
        value[1..5].copy_from_slice(&scale.to_le_bytes());
        value[5] = size as u8;
        value[6..].copy_from_slice(&unscaled.to_le_bytes());
        put_part(out, cursor, value, 6 + size);
        return;
    }
    let mut head = [DECIMAL; 6];
    head[1..5].copy_from_slice(&scale.to_le_bytes());
    head[5] = size as u8;
    put(out, cursor, head);
    copy(out, cursor, &unscaled.to_le_bytes()[..size]);
}

#[inline(always)]
fn small_decimal_len(unscaled: i64, scale: i8) -> usize {
    6 + small_decimal_size(normalise_small_decimal(unscaled, scale).0)
}
