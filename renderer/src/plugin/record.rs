//! Device records: the plain-data structs that the CUDA kernels read as they are.
//!
//! A plugin's record is a `#[repr(C)]` struct of `u32`/`f32` fields (arrays and nested
//! records allowed) without implicit padding. [`device_record!`] declares one: it checks
//! that the fields' sizes add up to the record's size (so viewing it as bytes is sound),
//! marks it [`Pod`] and gives it a [`DeviceRecord::layout`] — the (record, field, offset)
//! entries that the CUDA twin is checked against (a `static_assert` per entry in every
//! module that includes it, and on the GPU the offsets NVRTC used).
//!
//! The records of a category live one after another in a word array ([`RecordBlob`]),
//! each at a 16-byte boundary, and a [`RecordRef`] per plugin instance says which kind
//! it is and where its record starts.

use std::mem::size_of;

/// Marker for records that are plain data without implicit padding, so that
/// viewing them as bytes is sound (checked by [`device_record!`] and the flat layout
/// table's macro).
///
/// # Safety
/// Implement only for `#[repr(C)]` types whose size equals the sum of their
/// fields' sizes and whose fields are all integers or floats (or arrays or `Pod`
/// records of them).
pub unsafe trait Pod: Copy {}

// SAFETY: integers, floats and arrays of them have no padding and no invalid bit patterns.
unsafe impl Pod for [f32; 3] {}
unsafe impl Pod for [f32; 2] {}
unsafe impl Pod for [u32; 3] {}
unsafe impl Pod for f32 {}
unsafe impl Pod for u32 {}

/// The bytes of a slice of POD records (what an upload copies).
pub fn as_bytes<T: Pod>(v: &[T]) -> &[u8] {
    // SAFETY: `T: Pod` has no padding and no invalid bit patterns, so every byte
    // of the slice is initialised; the length is the slice's size in bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// One entry of a layout table: a record's size (field `sizeof`) or a field's offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayoutEntry {
    /// The record (Rust and CUDA share the name).
    pub record: &'static str,
    /// A field, or `sizeof` for the record's size.
    pub field: &'static str,
    /// The field's byte offset (or the record's size).
    pub offset: usize,
}

/// `entries` with each (record, field) kept once, in first-seen order: a category's
/// records list the records they nest first, and several may nest the same one.
pub fn unique_layout(entries: Vec<LayoutEntry>) -> Vec<LayoutEntry> {
    let mut out: Vec<LayoutEntry> = Vec::with_capacity(entries.len());
    for e in entries {
        if !out
            .iter()
            .any(|o| o.record == e.record && o.field == e.field)
        {
            out.push(e);
        }
    }
    out
}

/// Appends the CUDA X-macro `name(S, F)` listing `layout` (`S(record, size)`,
/// `F(record, field, offset)`) and its expansion into `static_assert`s (sizes under
/// NVRTC, offsets too on the host); `hg_plugin_layout_table` (parity.cu) expands it
/// again to write the offsets NVRTC used.
pub fn write_layout_macro(s: &mut String, name: &str, layout: &[LayoutEntry]) {
    use std::fmt::Write as _;
    s.push_str("\n// S(record, size) and F(record, field, offset), from the Rust records.\n");
    let _ = write!(s, "#define {name}(S, F)");
    for e in layout {
        let _ = if e.field == "sizeof" {
            write!(s, " \\\n    S({}, {})", e.record, e.offset)
        } else {
            write!(s, " F({}, {}, {})", e.record, e.field, e.offset)
        };
    }
    let _ = writeln!(s, "\n{name}(HG_ASSERT_SIZE, HG_ASSERT_FIELD)");
}

/// The size of the field that `_f` projects to (the function is never called).
pub const fn field_size<T, F>(_f: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

/// A record the kernels read: its CUDA twin has the same name, fields and offsets.
pub trait DeviceRecord: Pod {
    /// The record's name in Rust and CUDA.
    const NAME: &'static str;

    /// Appends the layout entries of the records this one nests, then its own
    /// (its size, then each field's offset).
    fn layout(out: &mut Vec<LayoutEntry>);
}

/// Declares a plugin's `#[repr(C)]` struct a device record: lists its fields (every
/// one, in order: a missing field fails to compile) for the layout checks, and marks
/// it [`Pod`]. A field that is itself a record is written `field: Record`, so that
/// the nested record's layout is checked too.
///
/// ```ignore
/// device_record!(Diffuse { reflectance });
/// device_record!(RoughConductor { distr: MicrofacetParams, eta, k, specular_reflectance });
/// ```
#[macro_export]
macro_rules! device_record {
    ($rec:ident { $($field:ident $(: $nested:ty)?),* $(,)? }) => {
        // no implicit padding: the fields' sizes add up to the record's size, a whole
        // number of words
        const _: () = assert!(
            ::std::mem::size_of::<$rec>() == 0
                $(+ $crate::plugin::record::field_size(|r: &$rec| &r.$field))*
                && ::std::mem::size_of::<$rec>() % 4 == 0,
            concat!(stringify!($rec), " has padding or a field missing from device_record!")
        );
        // SAFETY: #[repr(C)] (the layout entries' offsets are checked against the CUDA
        // twin), no padding (asserted above), fields of u32/f32 or Pod records.
        unsafe impl $crate::plugin::record::Pod for $rec {}
        impl $crate::plugin::record::DeviceRecord for $rec {
            const NAME: &'static str = stringify!($rec);
            fn layout(out: &mut Vec<$crate::plugin::record::LayoutEntry>) {
                use $crate::plugin::record::LayoutEntry;
                $($(<$nested as $crate::plugin::record::DeviceRecord>::layout(out);)?)*
                out.push(LayoutEntry {
                    record: stringify!($rec),
                    field: "sizeof",
                    offset: ::std::mem::size_of::<$rec>(),
                });
                $(out.push(LayoutEntry {
                    record: stringify!($rec),
                    field: stringify!($field),
                    offset: ::std::mem::offset_of!($rec, $field),
                });)*
            }
        }
    };
}
pub use device_record;

/// Which plugin of a category an instance is, and where its record starts in the
/// category's [`RecordBlob`] (8 bytes, 8-aligned: the kernels read it with one load).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(8))]
pub struct RecordRef {
    /// The plugin's tag (its position in the category's registry).
    pub kind: u32,
    /// The record's first word in the blob (a multiple of [`SLOT_ALIGN_WORDS`]).
    pub offset: u32,
}
device_record!(RecordRef { kind, offset });

/// Records start at multiples of this many words (16 bytes): no record straddles a
/// 16-byte boundary more than its size requires, and vector loads stay aligned.
pub const SLOT_ALIGN_WORDS: usize = 4;

/// Words a record of `bytes` bytes occupies in a blob: its size rounded up to 16 bytes.
pub const fn slot_words(bytes: usize) -> usize {
    bytes.div_ceil(4 * SLOT_ALIGN_WORDS) * SLOT_ALIGN_WORDS
}

/// The records of one category, one after another in instance order, each in a slot of
/// its size rounded up to 16 bytes (see the category's registry for the kernels' side).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordBlob {
    /// The words.
    pub words: Vec<u32>,
}

impl RecordBlob {
    /// Appends `r` in a new slot and returns the slot's first word.
    pub fn push<R: Pod>(&mut self, r: &R) -> u32 {
        let at = self.words.len();
        self.words.resize(at + slot_words(size_of::<R>()), 0);
        write_words(&mut self.words[at..], r);
        at as u32
    }

    /// The bytes of the blob.
    pub fn bytes(&self) -> &[u8] {
        as_bytes(&self.words)
    }
}

/// A category's instances as the kernels read them: a [`RecordRef`] per instance and
/// the records, in order, one after another in the blob. `record` gives an instance's
/// tag and record words; it sees the refs of the instances before it (an adapter BSDF
/// holds where the records it wraps lie).
pub fn flatten_records<T>(
    items: &[T],
    mut record: impl FnMut(&T, &[RecordRef]) -> (u32, Vec<u32>),
) -> (Vec<RecordRef>, RecordBlob) {
    let mut refs = Vec::with_capacity(items.len());
    let mut blob = RecordBlob::default();
    for item in items {
        let offset = blob.words.len() as u32;
        let (kind, words) = record(item, &refs);
        blob.words.extend(words);
        refs.push(RecordRef { kind, offset });
    }
    (refs, blob)
}

/// The words of `r` (its size rounded up to a slot), as the blob stores them.
pub fn record_words<R: Pod>(r: &R) -> Vec<u32> {
    let mut w = vec![0; slot_words(size_of::<R>())];
    write_words(&mut w, r);
    w
}

/// Copies the bytes of `r` to the start of `out` (which holds at least its slot).
fn write_words<R: Pod>(out: &mut [u32], r: &R) {
    let bytes = as_bytes(std::slice::from_ref(r));
    for (w, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
        *w = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
    }
}

/// Reads a `R` from the start of `words` (`None` when they are too few).
pub fn read_record<R: Pod>(words: &[u32]) -> Option<R> {
    if words.len() * 4 < size_of::<R>() {
        return None;
    }
    // SAFETY: `R: Pod` (integers and floats: every bit pattern is valid), the slice holds
    // at least size_of::<R>() bytes, and read_unaligned accepts any alignment.
    Some(unsafe { std::ptr::read_unaligned(words.as_ptr().cast::<R>()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct Inner {
        a: u32,
        b: f32,
    }
    device_record!(Inner { a, b });

    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct Outer {
        x: f32,
        inner: Inner,
        t: [f32; 3],
    }
    device_record!(Outer { x, inner: Inner, t });

    #[test]
    fn layouts_list_nested_records_first_then_every_field() {
        let mut v = Vec::new();
        Outer::layout(&mut v);
        let got: Vec<(&str, &str, usize)> =
            v.iter().map(|e| (e.record, e.field, e.offset)).collect();
        assert_eq!(
            got,
            [
                ("Inner", "sizeof", 8),
                ("Inner", "a", 0),
                ("Inner", "b", 4),
                ("Outer", "sizeof", 24),
                ("Outer", "x", 0),
                ("Outer", "inner", 4),
                ("Outer", "t", 12),
            ]
        );
    }

    #[test]
    fn records_start_at_16_byte_slots_and_read_back() {
        let mut blob = RecordBlob::default();
        let a = Inner { a: 7, b: 0.5 };
        let o = Outer {
            x: 1.0,
            inner: a,
            t: [2.0, 3.0, 4.0],
        };
        assert_eq!(blob.push(&a), 0);
        assert_eq!(blob.push(&o), 4, "8 bytes take a 16-byte slot");
        assert_eq!(blob.push(&a), 12, "24 bytes take two slots");
        assert_eq!(blob.words.len(), 16);
        assert_eq!(read_record::<Outer>(&blob.words[4..]), Some(o));
        assert_eq!(read_record::<Inner>(&blob.words[12..]), Some(a));
        assert_eq!(read_record::<Outer>(&blob.words[12..14]), None);
        assert_eq!(record_words(&a), blob.words[..4]);
        assert_eq!((slot_words(4), slot_words(16), slot_words(20)), (4, 4, 8));
    }
}
