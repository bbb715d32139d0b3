//! [`AlignedBuf`]: a growable byte buffer whose data starts on a 64-byte
//! boundary (Arrow's alignment), typed on demand, reused without allocating.

use bytemuck::Pod;

/// Alignment of every buffer's first byte, as Arrow recommends.
pub const ALIGN: usize = 64;
const WORD: usize = std::mem::size_of::<u64>();
const ALIGN_WORDS: usize = ALIGN / WORD;

/// A growable buffer of bytes whose first byte sits on a 64-byte boundary.
///
/// Backed by a `Vec<u64>` with a few words of slack: the data starts at the
/// first word whose address is a multiple of 64 (found from the pointer, no
/// `unsafe`), and moves there again when the vector reallocates. Clearing
/// keeps the capacity, so a buffer refilled with no more data than before
/// allocates nothing. Values are little-endian (the machine's order; the
/// crate's typed views assume a little-endian target, like Arrow's IPC).
#[derive(Clone, Default)]
pub struct AlignedBuf {
    words: Vec<u64>,
    /// Index of the first word of data (64-byte aligned).
    start: usize,
    /// Length of the data in bytes.
    len: usize,
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBuf")
            .field("len", &self.len)
            .field("capacity", &self.capacity())
            .finish()
    }
}

/// Equal when the bytes are (not the capacity).
impl PartialEq for AlignedBuf {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

fn aligned_start(words: &[u64]) -> usize {
    let addr = words.as_ptr() as usize;
    (ALIGN - addr % ALIGN) % ALIGN / WORD
}

impl AlignedBuf {
    /// An empty buffer (no allocation).
    pub const fn new() -> Self {
        AlignedBuf {
            words: Vec::new(),
            start: 0,
            len: 0,
        }
    }

    /// Length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no bytes.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes it can hold without allocating.
    pub fn capacity(&self) -> usize {
        (self.words.len().saturating_sub(self.start)) * WORD
    }

    /// Empties the buffer, keeping its memory.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Shortens the buffer to `len` bytes (no effect when it is shorter).
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Makes room for `additional` more bytes.
    #[inline]
    pub fn reserve(&mut self, additional: usize) {
        let need = self.len + additional;
        if need > self.capacity() {
            self.grow(need);
        }
    }

    #[cold]
    fn grow(&mut self, need: usize) {
        let want = need.max(self.capacity() * 2).max(ALIGN);
        let words = want.div_ceil(WORD) + ALIGN_WORDS;
        let mut new = vec![0u64; words];
        let start = aligned_start(&new);
        let used = self.len.div_ceil(WORD);
        new[start..start + used].copy_from_slice(&self.words[self.start..self.start + used]);
        self.words = new;
        self.start = start;
    }

    /// The backing words and the byte range of the data in them: how a
    /// caller takes the buffer without copying it (the Python package hands
    /// the words to numpy and views the range). The range starts 64-byte
    /// aligned in memory, as long as the words are not moved.
    ///
    /// ```
    /// use recordwire::batch::AlignedBuf;
    /// let mut b = AlignedBuf::new();
    /// b.extend_from_slice(b"abc");
    /// let (words, range) = b.into_words();
    /// let bytes: &[u8] = bytemuck::cast_slice(&words);
    /// assert_eq!(&bytes[range], b"abc");
    /// ```
    pub fn into_words(self) -> (Vec<u64>, std::ops::Range<usize>) {
        let start = self.start * WORD;
        (self.words, start..start + self.len)
    }

    /// The bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        let words = &self.words[self.start..self.start + self.len.div_ceil(WORD)];
        &bytemuck::cast_slice::<u64, u8>(words)[..self.len]
    }

    /// The bytes, mutable.
    #[inline]
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        let end = self.start + self.len.div_ceil(WORD);
        let len = self.len;
        &mut bytemuck::cast_slice_mut::<u64, u8>(&mut self.words[self.start..end])[..len]
    }

    /// The data as values of `T` (the length must be a multiple of its size).
    #[inline]
    pub fn typed<T: Pod>(&self) -> &[T] {
        bytemuck::cast_slice(self.as_bytes())
    }

    /// The data as values of `T`, mutable.
    #[inline]
    pub fn typed_mut<T: Pod>(&mut self) -> &mut [T] {
        bytemuck::cast_slice_mut(self.as_bytes_mut())
    }

    /// Number of whole `T`s held.
    #[inline]
    pub fn count<T>(&self) -> usize {
        self.len / std::mem::size_of::<T>()
    }

    /// Appends bytes.
    #[inline]
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.extend_space(bytes.len()).copy_from_slice(bytes);
    }

    /// Appends `n` bytes and returns them (zeros when first grown, otherwise
    /// whatever the buffer held there before: callers overwrite them).
    #[inline]
    pub fn extend_space(&mut self, n: usize) -> &mut [u8] {
        self.reserve(n);
        // Straight into the words, without making the whole data a slice
        // first (this is on the decoder's path once per value).
        let at = self.start * WORD + self.len;
        self.len += n;
        let all: &mut [u8] = bytemuck::cast_slice_mut(&mut self.words);
        &mut all[at..at + n]
    }

    /// Appends `n` values of `T` and returns them for the caller to fill.
    #[inline]
    pub fn extend_typed<T: Pod>(&mut self, n: usize) -> &mut [T] {
        bytemuck::cast_slice_mut(self.extend_space(n * std::mem::size_of::<T>()))
    }

    /// Appends one value.
    #[inline]
    pub fn push<T: Pod>(&mut self, v: T) {
        self.extend_from_slice(bytemuck::bytes_of(&v));
    }

    /// Appends `n` copies of the bytes of `value`.
    pub fn extend_repeat(&mut self, value: &[u8], n: usize) {
        if value.is_empty() || n == 0 {
            return;
        }
        let out = self.extend_space(value.len() * n);
        if value.iter().all(|&b| b == 0) {
            out.fill(0);
        } else {
            for c in out.chunks_exact_mut(value.len()) {
                c.copy_from_slice(value);
            }
        }
    }

    /// Sets the length to `len` bytes, filling new bytes with zeros.
    pub fn resize_zeroed(&mut self, len: usize) {
        if len <= self.len {
            self.len = len;
        } else {
            self.extend_space(len - self.len).fill(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_is_aligned_after_every_growth() {
        let mut b = AlignedBuf::new();
        for i in 0..10_000u32 {
            b.push(i);
            assert_eq!(b.as_bytes().as_ptr() as usize % ALIGN, 0);
        }
        assert_eq!(b.typed::<u32>().len(), 10_000);
        assert!(b
            .typed::<u32>()
            .iter()
            .enumerate()
            .all(|(i, &v)| v == i as u32));
    }

    #[test]
    fn clear_keeps_memory() {
        let mut b = AlignedBuf::new();
        b.extend_repeat(&7i64.to_le_bytes(), 100);
        let cap = b.capacity();
        b.clear();
        b.extend_repeat(&[1, 2, 3], 5);
        assert_eq!(b.capacity(), cap);
        assert_eq!(b.as_bytes(), [1, 2, 3].repeat(5));
        b.resize_zeroed(20);
        assert_eq!(&b.as_bytes()[15..], [0; 5]);
        b.truncate(2);
        assert_eq!(b.as_bytes(), [1, 2]);
    }
}
