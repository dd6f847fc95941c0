//! A first-in first-out ring of `Copy` values whose capacity is a power of two, so that an
//! element's slot is its position masked (one `and`), not a compare-and-wrap as in
//! `VecDeque`: the link host reads its line a few times on every packet-hop.

/// The ring. Positions are counted from the front (`0` is the oldest element).
#[derive(Debug, Clone)]
pub struct Ring<T: Copy> {
    buf: Vec<T>,
    /// `buf.len() - 1` (the capacity is a power of two); `0` with an empty buffer.
    mask: usize,
    /// Slot of the front element.
    head: usize,
    len: usize,
}

impl<T: Copy> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            buf: Vec::new(),
            mask: 0,
            head: 0,
            len: 0,
        }
    }
}

impl<T: Copy> Ring<T> {
    pub fn new() -> Self {
        Self::default()
    }
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
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
        debug_assert!(i < self.len, "ring position {i} of {}", self.len);
        self.buf[(self.head + i) & self.mask]
    }
    /// The element at position `i` from the front, if there is one.
    #[inline]
    pub fn get(&self, i: usize) -> Option<T> {
        (i < self.len).then(|| self.at(i))
    }
    #[inline(always)]
    pub fn front(&self) -> Option<T> {
        self.get(0)
    }
    #[inline(always)]
    pub fn push_back(&mut self, x: T) {
        if self.len == self.buf.len() {
            self.grow(x);
        }
        let slot = (self.head + self.len) & self.mask;
        self.buf[slot] = x;
        self.len += 1;
    }
    #[inline(always)]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let x = self.buf[self.head];
        self.head = (self.head + 1) & self.mask;
        self.len -= 1;
        Some(x)
    }
    /// Doubles the capacity (at least 4, as `VecDeque`), keeping the order; `fill` pads the new
    /// slots.
    #[cold]
    fn grow(&mut self, fill: T) {
        let cap = (self.buf.len() * 2).max(4);
        let mut buf = Vec::with_capacity(cap);
        buf.extend((0..self.len).map(|i| self.at(i)));
        buf.resize(cap, fill);
        self.buf = buf;
        self.mask = cap - 1;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    proptest! {
        /// The same answers as `VecDeque` under any mix of pushes and pops, across growth
        /// and wrap-around.
        #[test]
        fn behaves_as_a_deque(ops in proptest::collection::vec(0u8..3, 0..600)) {
            let mut ring = Ring::new();
            let mut reference = VecDeque::new();
            for (k, op) in ops.into_iter().enumerate() {
                if op == 0 {
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
