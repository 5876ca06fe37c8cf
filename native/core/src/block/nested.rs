//! Nested columns, column at a time: a list, struct, map or dictionary gathers the indices of the child
//! values its non-NULL rows hold, and its children size and write those in one pass each, at cursors the
//! parent computed from the children's sizes.

use arrow_buffer::OffsetBuffer;
use sha2::{Digest, Sha256};

use super::{put, size, write, Ctx, Rows, Run};
use crate::column::{Node, Nulls};
use crate::encode::{ARRAY, MAP, NULL, STRUCT};
use crate::murmur3::{murmur3_x64_128, SEED};

/// A tag and a `u32` count: the header of an array, a map or a struct.
#[inline(always)]
fn header(tag: u8, count: usize) -> [u8; 5] {
    let mut bytes = [tag; 5];
    bytes[1..].copy_from_slice(&(count as u32).to_le_bytes());
    bytes
}

/// Whether a row's elements start where the previous row's end (list and map offsets, fixed-size lists), so
/// that consecutive rows without NULLs hold consecutive elements; a list view's need not.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Chain {
    Offsets,
    Views,
}

/// The child values a pass covers: consecutive (no gather, no index to load), or gathered.
enum Picked {
    Run(Run),
    Gathered(Vec<usize>),
}

impl Picked {
    fn len(&self) -> usize {
        match self {
            Self::Run(run) => run.len,
            Self::Gathered(indices) => indices.len(),
        }
    }

    fn size(&self, node: &Node, sizes: &mut [usize], ctx: &mut Ctx) {
        match self {
            Self::Run(run) => size(node, *run, sizes, ctx),
            Self::Gathered(indices) => size(node, &indices[..], sizes, ctx),
        }
    }

    fn write(&self, node: &Node, out: &mut [u8], cursors: &mut [usize], ctx: &mut Ctx) {
        match self {
            Self::Run(run) => write(node, *run, out, cursors, ctx),
            Self::Gathered(indices) => write(node, &indices[..], out, cursors, ctx),
        }
    }

    fn give(self, ctx: &mut Ctx) {
        if let Self::Gathered(indices) = self {
            ctx.give(indices);
        }
    }
}

/// The elements of the non-NULL rows, in order.
fn elements<R: Rows>(
    nulls: &Nulls,
    rows: R,
    chain: Chain,
    range: &impl Fn(usize) -> (usize, usize),
    ctx: &mut Ctx,
) -> Picked {
    if let (Chain::Offsets, None, Some(first)) = (chain, nulls.buffer(), rows.start()) {
        if rows.len() == 0 {
            return Picked::Run(Run { start: 0, len: 0 });
        }
        let (start, end) = (range(first).0, range(first + rows.len() - 1).1);
        return Picked::Run(Run {
            start,
            len: end - start,
        });
    }
    let mut elements = ctx.indices();
    for k in 0..rows.len() {
        let row = rows.at(k);
        if !nulls.is_null(row) {
            let (start, end) = range(row);
            elements.extend(start..end);
        }
    }
    Picked::Gathered(elements)
}

/// The length of every value of `node`, when all of them encode to as many bytes (fixed-width types without
/// NULLs): a list of them is sized without sizing its elements, and a record without a pass of their own.
pub(super) fn fixed_width(node: &Node) -> Option<usize> {
    let (nulls, width) = match node {
        Node::Boolean(n, _) => (n, 2),
        Node::Int8(n, _)
        | Node::Int16(n, _)
        | Node::Int32(n, _)
        | Node::Int64(n, _)
        | Node::UInt8(n, _)
        | Node::UInt16(n, _)
        | Node::UInt32(n, _)
        | Node::Float32(n, _)
        | Node::Float64(n, _)
        | Node::Timestamp(_, n, _, _) => (n, 9),
        Node::Date32(n, _) | Node::Date64(n, _) => (n, 5),
        _ => return None,
    };
    nulls.buffer().is_none().then_some(width)
}

/// Arrays (every list form): `range(row)` is a row's elements in `child`.
pub(super) fn list_size<R: Rows>(
    nulls: &Nulls,
    rows: R,
    sizes: &mut [usize],
    chain: Chain,
    range: impl Fn(usize) -> (usize, usize),
    child: &Node,
    ctx: &mut Ctx,
) {
    if let Some(width) = fixed_width(child) {
        for (k, s) in sizes.iter_mut().enumerate() {
            let row = rows.at(k);
            *s += if nulls.is_null(row) {
                1
            } else {
                let (start, end) = range(row);
                5 + width * (end - start)
            };
        }
        return;
    }
    let elements = elements(nulls, rows, chain, &range, ctx);
    let mut element_sizes = ctx.zeros(elements.len());
    elements.size(child, &mut element_sizes, ctx);
    let mut next = 0;
    for (k, s) in sizes.iter_mut().enumerate() {
        let row = rows.at(k);
        if nulls.is_null(row) {
            *s += 1;
        } else {
            let (start, end) = range(row);
            let count = end - start;
            *s += 5 + element_sizes[next..next + count].iter().sum::<usize>();
            next += count;
        }
    }
    elements.give(ctx);
    ctx.keep_sizes(child, rows, element_sizes);
}

#[allow(clippy::too_many_arguments)]
pub(super) fn list_write<R: Rows>(
    nulls: &Nulls,
    rows: R,
    out: &mut [u8],
    cursors: &mut [usize],
    chain: Chain,
    range: impl Fn(usize) -> (usize, usize),
    child: &Node,
    ctx: &mut Ctx,
) {
    let elements = elements(nulls, rows, chain, &range, ctx);
    let kept = match fixed_width(child) {
        Some(width) => {
            let mut sizes = ctx.indices();
            sizes.resize(elements.len(), width);
            Some(sizes)
        }
        None => ctx.kept_sizes(child, rows),
    };
    let mut element_cursors = match kept {
        Some(sizes) => sizes,
        None => {
            let mut sizes = ctx.zeros(elements.len());
            elements.size(child, &mut sizes, ctx);
            sizes
        }
    };
    debug_assert_eq!(element_cursors, {
        let mut sizes = vec![0; elements.len()];
        elements.size(
            child,
            &mut sizes,
            &mut Ctx {
                sorted: ctx.sorted,
                ..Ctx::default()
            },
        );
        sizes
    });
    // Each element's size becomes its cursor: after its row's header and the elements before it.
    let mut next = 0;
    for (k, cursor) in cursors.iter_mut().enumerate() {
        let row = rows.at(k);
        if nulls.is_null(row) {
            put(out, cursor, [NULL]);
        } else {
            let (start, end) = range(row);
            let count = end - start;
            put(out, cursor, header(ARRAY, count));
            for element in &mut element_cursors[next..next + count] {
                let element_size = *element;
                *element = *cursor;
                *cursor += element_size;
            }
            next += count;
        }
    }
    // An element's overspill would land on the next element, whose earlier values are written.
    let spill = std::mem::replace(&mut ctx.spill, false);
    elements.write(child, out, &mut element_cursors, ctx);
    ctx.spill = spill;
    elements.give(ctx);
    ctx.give(element_cursors);
}

/// The non-NULL rows (or, given `keys`, their dictionary indices), and their positions among `rows`.
fn valid_rows<R: Rows>(
    nulls: &Nulls,
    rows: R,
    keys: Option<&[usize]>,
    ctx: &mut Ctx,
) -> (Vec<usize>, Vec<usize>) {
    let (mut valid, mut positions) = (ctx.indices(), ctx.indices());
    for k in 0..rows.len() {
        let row = rows.at(k);
        if !nulls.is_null(row) {
            valid.push(keys.map_or(row, |keys| keys[row]));
            positions.push(k);
        }
    }
    (valid, positions)
}

pub(super) fn struct_size<R: Rows>(
    nulls: &Nulls,
    rows: R,
    sizes: &mut [usize],
    fields: &[Node],
    ctx: &mut Ctx,
) {
    if nulls.buffer().is_none() {
        sizes.iter_mut().for_each(|s| *s += 5);
        for field in fields {
            size(field, rows, sizes, ctx);
        }
        return;
    }
    let (valid, positions) = valid_rows(nulls, rows, None, ctx);
    let mut valid_sizes = ctx.zeros(valid.len());
    for field in fields {
        size(field, &valid[..], &mut valid_sizes, ctx);
    }
    sizes.iter_mut().for_each(|s| *s += 1);
    for (&k, &s) in positions.iter().zip(&valid_sizes) {
        sizes[k] += 4 + s;
    }
    ctx.give(valid);
    ctx.give(positions);
    ctx.give(valid_sizes);
}

pub(super) fn struct_write<R: Rows>(
    nulls: &Nulls,
    rows: R,
    out: &mut [u8],
    cursors: &mut [usize],
    fields: &[Node],
    ctx: &mut Ctx,
) {
    let head = header(STRUCT, fields.len());
    if nulls.buffer().is_none() {
        cursors.iter_mut().for_each(|c| put(out, c, head));
        for field in fields {
            write(field, rows, out, cursors, ctx);
        }
        return;
    }
    for (k, cursor) in cursors.iter_mut().enumerate() {
        if nulls.is_null(rows.at(k)) {
            put(out, cursor, [NULL]);
        } else {
            put(out, cursor, head);
        }
    }
    let (valid, positions) = valid_rows(nulls, rows, None, ctx);
    let mut valid_cursors = ctx.indices();
    valid_cursors.extend(positions.iter().map(|&k| cursors[k]));
    for field in fields {
        write(field, &valid[..], out, &mut valid_cursors, ctx);
    }
    for (&k, &cursor) in positions.iter().zip(&valid_cursors) {
        cursors[k] = cursor;
    }
    ctx.give(valid);
    ctx.give(positions);
    ctx.give(valid_cursors);
}

/// Dictionaries: the values the keys of the non-NULL rows name.
pub(super) fn dictionary_size<R: Rows>(
    nulls: &Nulls,
    rows: R,
    sizes: &mut [usize],
    keys: &[usize],
    values: &Node,
    ctx: &mut Ctx,
) {
    let (indices, positions) = valid_rows(nulls, rows, Some(keys), ctx);
    let mut value_sizes = ctx.zeros(indices.len());
    size(values, &indices[..], &mut value_sizes, ctx);
    sizes.iter_mut().for_each(|s| *s += 1);
    for (&k, &s) in positions.iter().zip(&value_sizes) {
        sizes[k] += s - 1;
    }
    ctx.give(indices);
    ctx.give(positions);
    ctx.give(value_sizes);
}

pub(super) fn dictionary_write<R: Rows>(
    nulls: &Nulls,
    rows: R,
    out: &mut [u8],
    cursors: &mut [usize],
    keys: &[usize],
    values: &Node,
    ctx: &mut Ctx,
) {
    let (indices, positions) = valid_rows(nulls, rows, Some(keys), ctx);
    for (k, cursor) in cursors.iter_mut().enumerate() {
        if nulls.is_null(rows.at(k)) {
            put(out, cursor, [NULL]);
        }
    }
    let mut value_cursors = ctx.indices();
    value_cursors.extend(positions.iter().map(|&k| cursors[k]));
    write(values, &indices[..], out, &mut value_cursors, ctx);
    for (&k, &cursor) in positions.iter().zip(&value_cursors) {
        cursors[k] = cursor;
    }
    ctx.give(indices);
    ctx.give(positions);
    ctx.give(value_cursors);
}

/// Maps: each entry (its key's encoding, then its value's) is encoded, column at a time, into a buffer of its
/// own and hashed; a row gets the sum of its entries' MurmurHash3 digests (section 4.6), or their SHA-256
/// digests in ascending order under SHA-256 and HMAC-SHA-256 (section 10).
#[allow(clippy::too_many_arguments)]
pub(super) fn map_write<R: Rows>(
    nulls: &Nulls,
    rows: R,
    out: &mut [u8],
    cursors: &mut [usize],
    offsets: &OffsetBuffer<i32>,
    keys: &Node,
    values: &Node,
    ctx: &mut Ctx,
) {
    let offsets: &[i32] = offsets;
    let range = |row: usize| (offsets[row] as usize, offsets[row + 1] as usize);
    let entries = elements(nulls, rows, Chain::Offsets, &range, ctx);
    let mut entry_cursors = ctx.zeros(entries.len());
    entries.size(keys, &mut entry_cursors, ctx);
    entries.size(values, &mut entry_cursors, ctx);
    // Each entry's size becomes its start, and its cursor.
    let mut starts = ctx.indices();
    let mut end = 0;
    for cursor in entry_cursors.iter_mut() {
        starts.push(end);
        end += *cursor;
        *cursor = end - *cursor;
    }
    starts.push(end);
    let mut encoded = ctx.bytes();
    // Every byte is written below.
    if encoded.len() < end {
        encoded.resize(end, 0);
    }
    // An entry's overspill would land on the next entry, whose key is written.
    let spill = std::mem::replace(&mut ctx.spill, false);
    entries.write(keys, &mut encoded, &mut entry_cursors, ctx);
    entries.write(values, &mut encoded, &mut entry_cursors, ctx);
    ctx.spill = spill;
    let entry = |j: usize| &encoded[starts[j]..starts[j + 1]];
    let mut next = 0;
    let mut digests: Vec<[u8; 32]> = Vec::new();
    for (k, cursor) in cursors.iter_mut().enumerate() {
        let row = rows.at(k);
        if nulls.is_null(row) {
            put(out, cursor, [NULL]);
            continue;
        }
        let (start, end) = range(row);
        let count = end - start;
        put(out, cursor, header(MAP, count));
        if ctx.sorted {
            digests.clear();
            digests
                .extend((next..next + count).map(|j| <[u8; 32]>::from(Sha256::digest(entry(j)))));
            digests.sort_unstable();
            for digest in &digests {
                put(out, cursor, *digest);
            }
        } else {
            // Addition, not XOR, so that equal entries accumulate instead of cancelling.
            let sum = (next..next + count).fold(0u128, |sum, j| {
                sum.wrapping_add(u128::from_le_bytes(murmur3_x64_128(entry(j), SEED)))
            });
            put(out, cursor, sum.to_le_bytes());
        }
        next += count;
    }
    entries.give(ctx);
    ctx.give(entry_cursors);
    ctx.give(starts);
    ctx.give_bytes(encoded);
}
