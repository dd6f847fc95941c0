//! A first-in first-out ring of `Copy` values whose capacity is a power of two, so that an
//! element's slot is its position masked (one `and`), not a compare-and-wrap as in
//! `VecDeque`: the link host reads its line a few times on every packet-hop.

/// The largest capacity: positions and the length are kept in 32 bits. (2^31 of a link's line
/// entries would take 48 GiB.)
pub const MAX_CAPACITY: usize = 1 << 31;

/// Panics unless `cap` is a power of two of at most [`MAX_CAPACITY`] (where a ring is made,
/// and where it grows or shrinks: never on the hop's path).
fn check_capacity(cap: usize) {
    assert!(
        cap.is_power_of_two() && cap <= MAX_CAPACITY,
        "ring capacity {cap}: a power of two of at most {MAX_CAPACITY}"
    );
}

/// The ring. Positions are counted from the front (`0` is the oldest element). 24 bytes: the
/// buffer (its capacity is its length, and the mask that length less one) and the front's
/// slot and the length in 32 bits, so that with the cursors beside it a link direction's
/// line fits the first of its cache lines (`net::link::LinkDir`). A ring never holds more than
/// [`MAX_CAPACITY`] elements (`check_capacity`, where it is made and where it grows).
#[derive(Debug, Clone)]
pub struct Ring<T: Copy> {
    buf: Box<[T]>,
    /// Slot of the front element.
    head: u32,
    len: u32,
}

impl<T: Copy> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            buf: Box::default(),
            head: 0,
            len: 0,
        }
    }
}

impl<T: Copy> Ring<T> {
    pub fn new() -> Self {
        Self::default()
    }
    /// An empty ring holding `cap` (a power of two) without growing; `fill` pads the slots.
    pub fn with_capacity(cap: usize, fill: T) -> Self {
        check_capacity(cap);
        Ring {
            buf: vec![fill; cap].into_boxed_slice(),
            head: 0,
            len: 0,
        }
    }
    /// `capacity - 1`: a position's slot is `(head + position) & mask` (the capacity is a
    /// power of two). Of a ring without a buffer it wraps to `usize::MAX`: indexing reads it
    /// only where the ring holds an element; `prefetch_front` reads it of any ring, and only
    /// forms an address from it (`wrapping_add`), never dereferenced.
    #[inline(always)]
    fn mask(&self) -> usize {
        self.buf.len().wrapping_sub(1)
    }
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len as usize
    }
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Elements it holds without growing.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }
    /// The element at position `i` from the front (`i < len`).
    #[inline(always)]
    pub fn at(&self, i: usize) -> T {
        debug_assert!(i < self.len(), "ring position {i} of {}", self.len);
        self.buf[(self.head as usize + i) & self.mask()]
    }
    /// The element at position `i` from the front, if there is one.
    #[inline]
    pub fn get(&self, i: usize) -> Option<T> {
        (i < self.len()).then(|| self.at(i))
    }
    #[inline(always)]
    pub fn front(&self) -> Option<T> {
        self.get(0)
    }
    /// Starts loading the slots of the front element and the one after it (no effect on
    /// results; nothing is read).
    #[inline(always)]
    pub fn prefetch_front(&self) {
        let m = self.mask();
        let base = self.buf.as_ptr();
        crate::prefetch::read(base.wrapping_add(self.head as usize & m));
        crate::prefetch::read(base.wrapping_add((self.head as usize + 1) & m));
    }
    #[inline(always)]
    pub fn push_back(&mut self, x: T) {
        if self.len() == self.buf.len() {
            self.grow(x);
        }
        let slot = (self.head as usize + self.len()) & self.mask();
        self.buf[slot] = x;
        self.len += 1;
    }
    #[inline(always)]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let x = self.buf[self.head as usize];
        self.head = ((self.head as usize + 1) & self.mask()) as u32;
        self.len -= 1;
        Some(x)
    }
    /// Halves the capacity while a quarter of it or less is in use, down to `floor` (a power
    /// of two), keeping the order: what is left is at least twice the length. A ring's
    /// capacity otherwise follows the longest it has ever been; this lets it follow what it
    /// holds now (the link host calls it about once a simulated second, off the hop's path).
    pub fn shrink(&mut self, floor: usize) {
        debug_assert!(floor.is_power_of_two());
        let mut cap = self.buf.len();
        while cap > floor && self.len() * 4 <= cap {
            cap /= 2;
        }
        if cap < self.buf.len() {
            self.relocate(cap, self.buf[0]);
        }
    }
    /// Doubles the capacity (at least 4, as `VecDeque`), keeping the order; `fill` pads the new
    /// slots.
    #[cold]
    fn grow(&mut self, fill: T) {
        self.relocate((self.buf.len() * 2).max(4), fill);
    }
    /// Moves the elements, in order, to the front of a new buffer of `cap` (a power of two,
    /// at least the length, at most [`MAX_CAPACITY`]) padded with `fill`.
    #[cold]
    fn relocate(&mut self, cap: usize, fill: T) {
        check_capacity(cap);
        let mut buf = Vec::with_capacity(cap);
        buf.extend((0..self.len()).map(|i| self.at(i)));
        buf.resize(cap, fill);
        self.buf = buf.into_boxed_slice();
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// A ring that once held 1,000 and now holds 10 comes down to 32: it halves while a
    /// quarter or less is in use (10 of 64 is, 10 of 32 is not), keeping its elements in
    /// order; down to the floor, and no further.
    #[test]
    fn shrinks_to_what_it_holds() {
        let mut ring = Ring::new();
        for k in 0..1000 {
            ring.push_back(k);
        }
        while ring.len() > 10 {
            ring.pop_front();
        }
        assert_eq!(ring.capacity(), 1024);
        ring.shrink(16);
        assert_eq!(ring.capacity(), 32);
        let held: Vec<usize> = (0..10).map(|i| ring.at(i)).collect();
        assert_eq!(held, (990..1000).collect::<Vec<_>>());
        ring.push_back(1000);
        assert_eq!(ring.get(10), Some(1000));
        while ring.len() > 1 {
            ring.pop_front();
        }
        ring.shrink(16);
        assert_eq!(ring.capacity(), 16);
        assert_eq!(ring.front(), Some(1000));
    }

    /// A ring that grew to 64 and wrapped around its end shrinks to 32 with its elements in
    /// order.
    #[test]
    fn a_wrapped_ring_shrinks_in_order() {
        let mut ring = Ring::new();
        let mut reference = VecDeque::new();
        for k in 0..48 {
            ring.push_back(k);
            reference.push_back(k);
        }
        for _ in 0..40 {
            ring.pop_front();
            reference.pop_front();
        }
        for k in 48..68 {
            ring.push_back(k);
            reference.push_back(k);
        }
        for _ in 0..12 {
            ring.pop_front();
            reference.pop_front();
        }
        // head at slot 52 of 64, 16 elements: 12 before the end, 4 after the wrap
        assert_eq!((ring.capacity(), ring.len(), ring.head), (64, 16, 52));
        ring.shrink(4);
        assert_eq!(ring.capacity(), 32);
        assert!(ring.iter_eq(&reference));
        ring.push_back(68);
        reference.push_back(68);
        assert!(ring.iter_eq(&reference));
    }

    /// Positions and the length are 32-bit: the check that a new ring and a growing one pass
    /// (`check_capacity`) takes the largest capacity and refuses the next, before anything is
    /// allocated.
    #[test]
    fn refuses_a_capacity_beyond_32_bit_positions() {
        assert!(super::MAX_CAPACITY <= u32::MAX as usize);
        super::check_capacity(super::MAX_CAPACITY);
        let next = std::panic::catch_unwind(|| super::check_capacity(super::MAX_CAPACITY * 2));
        assert!(next.is_err());
        let not_a_power = std::panic::catch_unwind(|| super::check_capacity(48));
        assert!(not_a_power.is_err());
    }

    impl Ring<usize> {
        fn iter_eq(&self, reference: &VecDeque<usize>) -> bool {
            self.len() == reference.len() && (0..self.len()).all(|i| self.at(i) == reference[i])
        }
    }

    proptest! {
        /// The same answers as `VecDeque` under any mix of pushes, pops and shrinks, across
        /// growth and wrap-around: the first half of the operations leans to pushes or pops
        /// as `first` says, the second half as `then` says, so that rings grow, wrap and
        /// drain (and shrink) within one case.
        #[test]
        fn behaves_as_a_deque(
            first in 1u8..7,
            then in 1u8..7,
            ops in proptest::collection::vec(0u8..8, 0..600),
        ) {
            let mut ring = Ring::new();
            let mut reference = VecDeque::new();
            let half = ops.len() / 2;
            for (k, op) in ops.into_iter().enumerate() {
                let pop_below = if k < half { first } else { then };
                if op == 7 {
                    // shrinking keeps the order (checked below) and room for twice the length
                    let before = ring.capacity();
                    ring.shrink(4);
                    let after = ring.capacity();
                    prop_assert!(after <= before);
                    if after < before {
                        prop_assert!(after.is_power_of_two() && after >= 2 * ring.len());
                        prop_assert!(after == 4 || 4 * ring.len() > after);
                    }
                } else if op < pop_below {
                    prop_assert_eq!(ring.pop_front(), reference.pop_front());
                } else {
                    ring.push_back(k);
                    reference.push_back(k);
                }
                prop_assert_eq!(ring.len(), reference.len());
                prop_assert_eq!(ring.front(), reference.front().copied());
                for i in 0..reference.len() + 1 {
                    prop_assert_eq!(ring.get(i), reference.get(i).copied());
                }
            }
        }
    }
}
