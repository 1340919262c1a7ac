//! `ReadBuf`: a caller's buffer that a read may fill without first zeroing
//! it.
//!
//! Owns: a borrowed `[MaybeUninit<u8>]` and two cursors,
//! `filled <= initialized <= capacity`. Bytes below `filled` hold data the
//! reads produced; bytes below `initialized` are initialised (so may be
//! handed out as `&mut [u8]`); the rest may be uninitialised. This is what
//! lets a socket read land straight in uninitialised memory (hyper's read
//! cursor, `BytesMut`'s spare capacity) with no copy and no memset.
//!
//! Invariants (every `unsafe` below relies on them, and every safe method
//! keeps them): `filled <= initialized <= buf.len()`, and
//! `buf[..initialized]` is initialised. Only `assume_init` (and `BufMut`'s
//! `advance_mut`, built on it) may raise `initialized` without writing, and
//! they are `unsafe` for exactly that.
//!
//! Also owns `ReadBuf`'s `bytes::BufMut` impl (as Tokio's), so code that
//! writes into any `BufMut` can fill a `ReadBuf` in place.

use std::fmt;
use std::mem::MaybeUninit;

/// A buffer that is filled by reads, possibly partly uninitialised. It has
/// Tokio's `ReadBuf` API.
///
/// ```
/// use weft::io::ReadBuf;
///
/// let mut storage = [0u8; 8];
/// let mut buf = ReadBuf::new(&mut storage);
/// buf.put_slice(b"abc");
/// assert_eq!(buf.filled(), b"abc");
/// assert_eq!(buf.remaining(), 5);
/// ```
pub struct ReadBuf<'a> {
    buf: &'a mut [MaybeUninit<u8>],
    filled: usize,
    initialized: usize,
}

impl<'a> ReadBuf<'a> {
    /// A buffer over fully initialised memory; nothing is filled yet.
    #[inline]
    pub fn new(buf: &'a mut [u8]) -> ReadBuf<'a> {
        let initialized = buf.len();
        // SAFETY: `[u8]` and `[MaybeUninit<u8>]` have the same layout, and
        // the invariant records all of it as initialised, so nothing can
        // write uninitialised bytes through this view.
        let buf = unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) };
        ReadBuf {
            buf,
            filled: 0,
            initialized,
        }
    }

    /// A buffer over possibly uninitialised memory.
    #[inline]
    pub fn uninit(buf: &'a mut [MaybeUninit<u8>]) -> ReadBuf<'a> {
        ReadBuf {
            buf,
            filled: 0,
            initialized: 0,
        }
    }

    /// Total size of the buffer.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// The filled part.
    #[inline]
    pub fn filled(&self) -> &[u8] {
        // SAFETY: module invariant: `filled <= initialized`.
        unsafe { slice_assume_init(&self.buf[..self.filled]) }
    }

    /// The filled part, mutably.
    #[inline]
    pub fn filled_mut(&mut self) -> &mut [u8] {
        // SAFETY: module invariant: `filled <= initialized`.
        unsafe { slice_assume_init_mut(&mut self.buf[..self.filled]) }
    }

    /// A new `ReadBuf` over at most `n` bytes of the unfilled part. What is
    /// filled there is not reflected here: advance this buffer afterwards.
    #[inline]
    pub fn take(&mut self, n: usize) -> ReadBuf<'_> {
        let max = n.min(self.remaining());
        // What of the sub-buffer this one knows to be initialised, so that
        // a reader that initialises before filling (`initialize_unfilled`)
        // does not zero it again. (Tokio's sub-buffer starts uninitialised.)
        let initialized = (self.initialized - self.filled).min(max);
        // SAFETY: the sub-buffer is handed out as `MaybeUninit`, so no
        // uninitialised byte is exposed as `u8`.
        let unfilled = unsafe { &mut self.unfilled_mut()[..max] };
        let mut sub = ReadBuf::uninit(unfilled);
        // SAFETY: module invariant: `buf[..initialized]` of this buffer is
        // initialised, which covers the sub-buffer's first `initialized`.
        unsafe { sub.assume_init(initialized) };
        sub
    }

    /// The initialised part (filled or not).
    #[inline]
    pub fn initialized(&self) -> &[u8] {
        // SAFETY: module invariant.
        unsafe { slice_assume_init(&self.buf[..self.initialized]) }
    }

    /// The initialised part, mutably.
    #[inline]
    pub fn initialized_mut(&mut self) -> &mut [u8] {
        // SAFETY: module invariant.
        unsafe { slice_assume_init_mut(&mut self.buf[..self.initialized]) }
    }

    /// The whole buffer, initialised or not.
    ///
    /// # Safety
    /// The caller must not de-initialise any byte below `initialized`
    /// (write `MaybeUninit::uninit()` into it).
    #[inline]
    pub unsafe fn inner_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        &mut *self.buf
    }

    /// The unfilled part, possibly uninitialised.
    ///
    /// # Safety
    /// As [`ReadBuf::inner_mut`]: do not de-initialise initialised bytes.
    #[inline]
    pub unsafe fn unfilled_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        &mut self.buf[self.filled..]
    }

    /// The unfilled part, zeroing whatever of it was not initialised yet.
    #[inline]
    pub fn initialize_unfilled(&mut self) -> &mut [u8] {
        self.initialize_unfilled_to(self.remaining())
    }

    /// The first `n` bytes of the unfilled part, zeroing what of them was
    /// not initialised yet.
    ///
    /// # Panics
    /// If `n` exceeds [`ReadBuf::remaining`].
    #[inline]
    #[track_caller]
    pub fn initialize_unfilled_to(&mut self, n: usize) -> &mut [u8] {
        assert!(
            self.remaining() >= n,
            "ReadBuf::initialize_unfilled_to: n ({n}) exceeds the unfilled space ({})",
            self.remaining()
        );
        let end = self.filled + n;
        if self.initialized < end {
            for b in &mut self.buf[self.initialized..end] {
                b.write(0);
            }
            self.initialized = end;
        }
        // SAFETY: `buf[..end]` is initialised now (loop above or invariant).
        unsafe { slice_assume_init_mut(&mut self.buf[self.filled..end]) }
    }

    /// Bytes that can still be filled.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.capacity() - self.filled
    }

    /// Mark nothing as filled (initialised bytes stay initialised).
    #[inline]
    pub fn clear(&mut self) {
        self.filled = 0;
    }

    /// Mark `n` more bytes as filled.
    ///
    /// # Panics
    /// If that would pass the initialised part.
    #[inline]
    #[track_caller]
    pub fn advance(&mut self, n: usize) {
        let new = self
            .filled
            .checked_add(n)
            .expect("ReadBuf::advance: filled length overflows");
        self.set_filled(new);
    }

    /// Set the filled length.
    ///
    /// # Panics
    /// If `n` is past the initialised part.
    #[inline]
    #[track_caller]
    pub fn set_filled(&mut self, n: usize) {
        assert!(
            n <= self.initialized,
            "ReadBuf::set_filled: {n} is past the initialised part ({}): call assume_init after \
             writing into unfilled_mut()",
            self.initialized
        );
        self.filled = n;
    }

    /// Declare the first `n` unfilled bytes initialised.
    ///
    /// # Safety
    /// The caller has initialised them (a read wrote them).
    #[inline]
    pub unsafe fn assume_init(&mut self, n: usize) {
        let end = self.filled + n;
        if end > self.initialized {
            self.initialized = end;
        }
    }

    /// Fill the whole unfilled part with `byte` (one `memset`, without
    /// first zeroing what was not initialised).
    pub(crate) fn fill_remaining_with(&mut self, byte: u8) {
        let unfilled = &mut self.buf[self.filled..];
        let n = unfilled.len();
        // SAFETY: `unfilled` is `n` writable bytes; writing initialised
        // bytes into `MaybeUninit<u8>` is always sound.
        unsafe { std::ptr::write_bytes(unfilled.as_mut_ptr().cast::<u8>(), byte, n) };
        self.initialized = self.buf.len();
        self.filled = self.buf.len();
    }

    /// Append `src` to the filled part.
    ///
    /// # Panics
    /// If it does not fit.
    #[inline]
    #[track_caller]
    pub fn put_slice(&mut self, src: &[u8]) {
        assert!(
            self.remaining() >= src.len(),
            "ReadBuf::put_slice: {} bytes do not fit in the {} remaining",
            src.len(),
            self.remaining()
        );
        let end = self.filled + src.len();
        let dst = &mut self.buf[self.filled..end];
        // One `memcpy`: a loop of `MaybeUninit::write`s became a 16-byte
        // vector loop, about twice libc's instructions for 8 KiB (an
        // in-memory `io::copy` ran 1.5× Tokio's instructions, a `duplex`
        // at 0.84× its speed). (`write_copy_of_slice` would do this
        // safely, but is newer than weft's minimum Rust.)
        // SAFETY: `dst` and `src` have the same length, and they cannot
        // overlap: `dst` is borrowed mutably from `self`, `src` shared.
        // Writing initialised bytes into `MaybeUninit<u8>` is always sound.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr().cast::<u8>(), src.len());
        }
        if self.initialized < end {
            self.initialized = end;
        }
        self.filled = end;
    }
}

/// # Safety
/// Every byte of `s` is initialised.
#[inline]
unsafe fn slice_assume_init(s: &[MaybeUninit<u8>]) -> &[u8] {
    // SAFETY: same layout; the caller vouches for initialisation.
    unsafe { &*(s as *const [MaybeUninit<u8>] as *const [u8]) }
}

/// # Safety
/// Every byte of `s` is initialised.
#[inline]
unsafe fn slice_assume_init_mut(s: &mut [MaybeUninit<u8>]) -> &mut [u8] {
    // SAFETY: same layout; the caller vouches for initialisation.
    unsafe { &mut *(s as *mut [MaybeUninit<u8>] as *mut [u8]) }
}

// SAFETY: `BufMut`'s contract is that `chunk_mut` is writable memory of
// `remaining_mut()` bytes at most, and that `advance_mut(cnt)` exposes the
// next `cnt` bytes of it as data. `chunk_mut` is the unfilled part (so never
// longer than `remaining()`), and `advance_mut` fills exactly its first `cnt`
// bytes, which its caller promises are initialised.
unsafe impl bytes::BufMut for ReadBuf<'_> {
    #[inline]
    fn remaining_mut(&self) -> usize {
        self.remaining()
    }

    /// # Panics
    /// If `cnt` exceeds [`ReadBuf::remaining`] (`bytes` recommends it, and
    /// going on would record bytes past the buffer as initialised).
    #[inline]
    #[track_caller]
    unsafe fn advance_mut(&mut self, cnt: usize) {
        assert!(
            cnt <= self.remaining(),
            "ReadBuf::advance_mut: cnt ({cnt}) exceeds the unfilled space ({})",
            self.remaining()
        );
        // SAFETY: the caller initialised the first `cnt` bytes of
        // `chunk_mut()`, which are the first `cnt` unfilled bytes; the
        // assert keeps `initialized <= buf.len()`.
        unsafe { self.assume_init(cnt) };
        self.advance(cnt);
    }

    #[inline]
    fn chunk_mut(&mut self) -> &mut bytes::buf::UninitSlice {
        // SAFETY: an `UninitSlice` only lets its user write bytes, never
        // de-initialise them, which is what `unfilled_mut` asks.
        let unfilled = unsafe { self.unfilled_mut() };
        // SAFETY: pointer and length come from one live `&mut` slice, whose
        // borrow the returned reference keeps. (Not `UninitSlice::uninit`,
        // the safe form: it needs bytes 1.5, and weft asks only for "1".)
        unsafe {
            bytes::buf::UninitSlice::from_raw_parts_mut(
                unfilled.as_mut_ptr().cast(),
                unfilled.len(),
            )
        }
    }
}

impl fmt::Debug for ReadBuf<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadBuf")
            .field("filled", &self.filled)
            .field("initialized", &self.initialized)
            .field("capacity", &self.capacity())
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_sub_buffer_knows_what_is_initialised_and_fill_skips_zeroing() {
        let mut storage = [MaybeUninit::<u8>::uninit(); 16];
        let mut buf = ReadBuf::uninit(&mut storage);
        buf.put_slice(b"abc");
        buf.initialize_unfilled_to(5); // bytes 3..8 zeroed, not filled
        {
            let sub = buf.take(10);
            assert_eq!(sub.capacity(), 10);
            assert_eq!(sub.initialized(), &[0; 5], "the 5 zeroed bytes carry over");
        }
        {
            let sub = buf.take(2);
            assert_eq!(sub.initialized().len(), 2, "clipped to the sub-buffer");
        }
        buf.fill_remaining_with(b'z');
        assert_eq!(buf.filled(), b"abczzzzzzzzzzzzz");
        assert_eq!(buf.initialized().len(), 16);
        assert_eq!(buf.remaining(), 0);
    }

    #[test]
    fn uninit_buffer_fills_without_zeroing() {
        let mut storage = [MaybeUninit::<u8>::uninit(); 8];
        let mut buf = ReadBuf::uninit(&mut storage);
        assert_eq!(buf.initialized().len(), 0);
        // SAFETY: we write two bytes into the unfilled part before claiming them.
        unsafe {
            let un = buf.unfilled_mut();
            un[0].write(1);
            un[1].write(2);
            buf.assume_init(2);
        }
        buf.advance(2);
        assert_eq!(buf.filled(), &[1, 2]);
        assert_eq!(buf.initialized().len(), 2);
        assert_eq!(buf.remaining(), 6);
    }

    #[test]
    fn initialize_unfilled_zeroes_only_the_new_part() {
        let mut storage = [MaybeUninit::<u8>::uninit(); 4];
        let mut buf = ReadBuf::uninit(&mut storage);
        buf.put_slice(&[9]);
        let rest = buf.initialize_unfilled_to(2);
        assert_eq!(rest, &[0, 0]);
        rest[0] = 7;
        assert_eq!(buf.initialized(), &[9, 7, 0]);
        buf.set_filled(3);
        assert_eq!(buf.filled(), &[9, 7, 0]);
    }

    #[test]
    #[should_panic(expected = "past the initialised part")]
    fn advancing_past_initialised_panics() {
        let mut storage = [MaybeUninit::<u8>::uninit(); 4];
        let mut buf = ReadBuf::uninit(&mut storage);
        buf.advance(1);
    }

    #[test]
    fn fills_as_a_bytes_buf_mut() {
        use bytes::BufMut;

        let mut storage = [MaybeUninit::<u8>::uninit(); 8];
        let mut buf = ReadBuf::uninit(&mut storage);
        assert_eq!(buf.remaining_mut(), 8);
        // `BufMut`'s own writers, through `chunk_mut` / `advance_mut`.
        buf.put_u16(0x0102);
        BufMut::put_slice(&mut buf, b"ab");
        assert_eq!(buf.filled(), &[1, 2, b'a', b'b']);
        assert_eq!(buf.initialized().len(), 4, "exactly what was written");
        assert_eq!(buf.chunk_mut().len(), 4);
        buf.chunk_mut()[..1].copy_from_slice(b"z");
        // SAFETY: the first byte of the chunk was just written.
        unsafe { buf.advance_mut(1) };
        assert_eq!(buf.filled(), b"\x01\x02abz");
        assert_eq!(buf.remaining_mut(), 3);
    }

    #[test]
    #[should_panic(expected = "exceeds the unfilled space")]
    fn advance_mut_past_the_end_panics() {
        use bytes::BufMut;

        let mut storage = [0u8; 2];
        let mut buf = ReadBuf::new(&mut storage);
        // SAFETY: not reached past the assert: it panics first.
        unsafe { buf.advance_mut(3) };
    }

    #[test]
    fn take_limits_and_the_parent_advances_after() {
        let mut storage = [0u8; 10];
        let mut buf = ReadBuf::new(&mut storage);
        buf.put_slice(b"ab");
        let n = {
            let mut sub = buf.take(3);
            assert_eq!(sub.capacity(), 3);
            sub.put_slice(b"xyz");
            sub.filled().len()
        };
        // SAFETY: `take` handed out initialised bytes (new() initialises all).
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        assert_eq!(buf.filled(), b"abxyz");
    }
}
